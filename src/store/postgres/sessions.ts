/**
 * The PostgreSQL backend of the session storage (see ../session-storage.ts for the contract and
 * the crash guarantee): the tables of migration 6 in ./migrations.ts, over a `pg` pool. A running
 * session's writes go through its journal, one ordered chain per session; everything else is one
 * statement, or one transaction where several rows must appear together.
 */

import type { ChatMessage } from '../../llm/types.js';
import type { SessionState } from '../rows.js';
import {
  type AuditEntry,
  type NewSession,
  SessionNotFoundError,
  type SessionRow,
  type SessionSummary,
  type UsageRecord,
} from '../rows.js';
import { defaultHolder, type LeaseHolder, type StoredLeases } from '../run-lease.js';
import {
  JournalCache,
  type SessionFields,
  type SessionJournal,
  type SessionStorage,
} from '../session-storage.js';
import { inTransaction, type PgPool, redact } from './connection.js';
import { postgresLeases } from './run-leases.js';
import {
  appendMessage,
  insertSession,
  recordAudit,
  recordUsage,
  saveToolOutput,
  updateSession,
} from './session-writes.js';
import { sessionCount, sessionSpeeds, sessionUsage, usageReport } from './usage-report.js';
import { PostgresWakeups } from './wakeups.js';

const COLUMNS = `s.id, s.title, s.workspace, s.model, s.parent_id AS "parentId", s.depth, s.status,
  s.created_at::float8 AS "createdAt", s.updated_at::float8 AS "updatedAt"`;

/** A session with its counts; the caller adds WHERE and ORDER BY. */
const SUMMARY = `SELECT ${COLUMNS},
  (SELECT count(*)::int FROM hearth_messages m WHERE m.session_id = s.id) AS messages,
  (SELECT count(*)::int FROM hearth_messages m WHERE m.session_id = s.id AND m.role = 'assistant') AS turns,
  (SELECT coalesce(sum(prompt_tokens), 0)::float8 FROM hearth_usage u WHERE u.session_id = s.id) AS "promptTokens",
  (SELECT coalesce(sum(completion_tokens), 0)::float8 FROM hearth_usage u WHERE u.session_id = s.id) AS "completionTokens"
  FROM hearth_sessions s`;

export class PostgresSessionStorage implements SessionStorage {
  readonly location: string;
  readonly leases: StoredLeases;
  private readonly journals = new JournalCache<PostgresJournal>();

  /** `close` ends the pool only when `owned`; `holder` names this process in its run leases. */
  constructor(
    readonly pool: PgPool,
    url: string,
    private readonly owned = false,
    holder: LeaseHolder = defaultHolder(),
  ) {
    this.location = redact(url);
    this.leases = postgresLeases(pool, holder);
  }

  async create(input: NewSession, messages: ChatMessage[] = []): Promise<SessionRow> {
    return inTransaction(this.pool, (client) => insertSession(client, input, messages));
  }

  async get(id: string): Promise<SessionRow> {
    const { rows } = await this.pool.query<SessionRow>(
      `SELECT ${COLUMNS} FROM hearth_sessions s WHERE id = $1`,
      [id],
    );
    if (!rows[0]) throw new SessionNotFoundError(`No session ${id}.`);
    return rows[0];
  }

  async resolve(idOrPrefix: string): Promise<SessionRow> {
    const { rows } = await this.pool.query<SessionRow>(
      `SELECT ${COLUMNS} FROM hearth_sessions s WHERE id LIKE $1 ESCAPE '\\' LIMIT 2`,
      [`${idOrPrefix.replace(/[\\%_]/g, '\\$&')}%`],
    );
    if (rows.length === 0)
      throw new SessionNotFoundError(`No session matches "${idOrPrefix}". List them with: hearth sessions`);
    if (rows.length > 1)
      throw new SessionNotFoundError(`"${idOrPrefix}" matches several sessions; give more of the id.`);
    return rows[0]!;
  }

  async latest(workspace: string): Promise<SessionRow | undefined> {
    const { rows } = await this.pool.query<SessionRow>(
      `SELECT ${COLUMNS} FROM hearth_sessions s WHERE workspace = $1 AND depth = 0
         ORDER BY updated_at DESC, ord DESC LIMIT 1`,
      [workspace],
    );
    return rows[0];
  }

  async list(
    opts: { workspace?: string; limit?: number; topLevel?: boolean } = {},
  ): Promise<SessionSummary[]> {
    const params: unknown[] = [opts.limit ?? 50];
    const where: string[] = [];
    if (opts.workspace) where.push(`s.workspace = $${params.push(opts.workspace)}`);
    if (opts.topLevel) where.push('s.depth = 0');
    const { rows } = await this.pool.query<SessionSummary>(
      `${SUMMARY} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY s.updated_at DESC, s.ord DESC LIMIT $1`,
      params,
    );
    return rows;
  }

  async subagents(id: string): Promise<SessionSummary[]> {
    const { rows } = await this.pool.query<SessionSummary>(
      `${SUMMARY} WHERE s.parent_id = $1 AND s.depth > 0 ORDER BY s.created_at, s.ord`,
      [id],
    );
    return rows;
  }

  async subagentTree(id: string): Promise<SessionSummary[]> {
    const children = await this.subagents(id);
    const below = await Promise.all(children.map((child) => this.subagentTree(child.id)));
    return children.flatMap((child, i) => [child, ...below[i]!]);
  }

  async update(id: string, fields: SessionFields): Promise<void> {
    await updateSession(this.pool, id, fields);
  }

  async remove(id: string): Promise<void> {
    await this.pool.query(
      `WITH RECURSIVE tree(id) AS (
           SELECT $1::text UNION ALL
           SELECT s.id FROM hearth_sessions s JOIN tree t ON s.parent_id = t.id WHERE s.depth > 0)
         DELETE FROM hearth_sessions WHERE id IN (SELECT id FROM tree)`,
      [id],
    );
  }

  async appendMessage(id: string, message: ChatMessage): Promise<void> {
    await appendMessage(this.pool, id, message);
  }

  async messages(id: string): Promise<ChatMessage[]> {
    const { rows } = await this.pool.query<{ body: string }>(
      'SELECT body FROM hearth_messages WHERE session_id = $1 ORDER BY seq',
      [id],
    );
    return rows.map((r) => JSON.parse(r.body) as ChatMessage);
  }

  async messageCount(id: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      'SELECT (COALESCE(MAX(seq), -1) + 1)::int AS n FROM hearth_messages WHERE session_id = $1',
      [id],
    );
    return rows[0]!.n;
  }

  async fork(id: string, opts: { before?: number } = {}): Promise<SessionRow> {
    // What the session's journal has not sent yet belongs in the copy.
    await this.journals
      .held()
      .find((j) => j.id === id)
      ?.flush();
    const source = await this.get(id);
    return inTransaction(this.pool, async (client) => {
      const copy = await insertSession(client, {
        workspace: source.workspace,
        model: source.model,
        title: source.title ? `${source.title} (fork)` : '',
        parentId: source.id,
      });
      await client.query(
        `INSERT INTO hearth_messages (session_id, seq, role, body, created_at)
           SELECT $1, seq, role, body, created_at FROM hearth_messages WHERE session_id = $2 AND seq < $3::bigint`,
        [copy.id, source.id, opts.before ?? Number.MAX_SAFE_INTEGER],
      );
      await client.query(
        `INSERT INTO hearth_session_state (session_id, key, value)
           SELECT $1, key, value FROM hearth_session_state WHERE session_id = $2`,
        [copy.id, source.id],
      );
      return copy;
    });
  }

  async recordUsage(id: string, usage: UsageRecord): Promise<void> {
    await recordUsage(this.pool, id, usage);
  }

  usage(since?: number) {
    return usageReport(this.pool, since);
  }
  sessionUsage(id: string) {
    return sessionUsage(this.pool, id);
  }
  speeds(id: string) {
    return sessionSpeeds(this.pool, id);
  }
  count() {
    return sessionCount(this.pool);
  }

  async recordAudit(id: string, entry: AuditEntry): Promise<void> {
    await recordAudit(this.pool, id, entry);
  }

  async audit(id: string): Promise<Array<AuditEntry & { createdAt: number }>> {
    const { rows } = await this.pool.query(
      `SELECT tool, arguments, decision, rule, duration_ms AS "durationMs", exit_code AS "exitCode",
              created_at::float8 AS "createdAt"
         FROM hearth_audit WHERE session_id = $1 ORDER BY id`,
      [id],
    );
    return rows;
  }

  async saveToolOutput(id: string, callId: string, body: string): Promise<void> {
    await saveToolOutput(this.pool, id, callId, body);
  }

  async toolOutput(id: string, callId: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ body: string }>(
      'SELECT body FROM hearth_tool_outputs WHERE session_id = $1 AND call_id = $2',
      [id, callId],
    );
    return rows[0]?.body;
  }

  journal(id: string): Promise<SessionJournal> {
    return this.journals.get(id, async () => {
      const { rows } = await this.pool.query<{ key: string; value: string }>(
        'SELECT key, value FROM hearth_session_state WHERE session_id = $1',
        [id],
      );
      const journal: PostgresJournal = new PostgresJournal(
        this.pool,
        id,
        new Map(rows.map((r) => [r.key, r.value])),
        () => this.journals.forget(id, journal),
      );
      return journal;
    });
  }

  async readState(id: string, key: string): Promise<unknown> {
    const open = this.journals.held().find((j) => j.id === id);
    if (open) return open.state.get(key);
    const { rows } = await this.pool.query<{ value: string }>(
      'SELECT value FROM hearth_session_state WHERE session_id = $1 AND key = $2',
      [id, key],
    );
    return rows[0] ? JSON.parse(rows[0].value) : undefined;
  }

  async writeState(id: string, key: string, value: unknown): Promise<void> {
    const journal = await this.journal(id);
    journal.state.set(key, value);
    await journal.flush();
  }

  wakeups(): PostgresWakeups {
    return new PostgresWakeups(this.pool);
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.journals.held().map((j) => j.flush()));
    if (this.owned) await this.pool.end();
  }
}

/** How other processes name this one in a lease, when the caller did not say. */
/**
 * A running session's writes, sent one after another in the order they were made. After a write
 * fails, the later ones are dropped (a history with a hole would be worse than a shorter one) and
 * every `flush` rejects with that failure.
 */
class PostgresJournal implements SessionJournal {
  readonly state: SessionState;
  private tail: Promise<void> = Promise.resolve();
  private failed: Error | undefined;

  constructor(
    private readonly pool: PgPool,
    readonly id: string,
    private readonly values: Map<string, string>,
    /** Called once a write failed: whoever opens the session next starts from what is stored. */
    private readonly onFailure: () => void,
  ) {
    this.state = {
      get: (key) => {
        const text = values.get(key);
        return text === undefined ? undefined : JSON.parse(text);
      },
      set: (key, value) => {
        if (value === undefined) {
          values.delete(key);
          this.send((db) =>
            db.query('DELETE FROM hearth_session_state WHERE session_id = $1 AND key = $2', [id, key]),
          );
          return;
        }
        const text = JSON.stringify(value);
        values.set(key, text);
        this.send((db) =>
          db.query(
            `INSERT INTO hearth_session_state (session_id, key, value) VALUES ($1, $2, $3)
               ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value`,
            [id, key, text],
          ),
        );
      },
    };
  }

  appendMessage(message: ChatMessage): void {
    this.send((db) => appendMessage(db, this.id, message));
  }
  update(fields: SessionFields): void {
    this.send((db) => updateSession(db, this.id, fields));
  }
  recordUsage(usage: UsageRecord): void {
    this.send((db) => recordUsage(db, this.id, usage));
  }
  recordAudit(entry: AuditEntry): void {
    this.send((db) => recordAudit(db, this.id, entry));
  }
  saveToolOutput(callId: string, body: string): void {
    this.send((db) => saveToolOutput(db, this.id, callId, body));
  }

  async flush(): Promise<void> {
    await this.tail;
    if (this.failed) throw this.failed;
  }

  async reload(): Promise<void> {
    await this.flush();
    const { rows } = await this.pool.query<{ key: string; value: string }>(
      'SELECT key, value FROM hearth_session_state WHERE session_id = $1',
      [this.id],
    );
    this.values.clear();
    for (const row of rows) this.values.set(row.key, row.value);
  }

  private send(write: (db: PgPool) => Promise<unknown>): void {
    this.tail = this.tail.then(async () => {
      if (this.failed) return;
      try {
        await write(this.pool);
      } catch (err) {
        this.onFailure();
        this.failed = new Error(
          `Session ${this.id} could not be saved to PostgreSQL (${(err as Error).message}); ` +
            'what was saved before stays, and the session continues from there once the database is back.',
        );
      }
    });
  }
}
