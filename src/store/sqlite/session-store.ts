import type { ChatMessage } from '../../llm/types.js';
import {
  type AuditEntry,
  auditValues,
  type NewSession,
  newSessionRow,
  SessionNotFoundError,
  type SessionRow,
  type SessionState,
  type SessionSummary,
  speedColumn,
  type UsageRecord,
} from '../rows.js';
import type { Db, Statement } from './database.js';
import { WakeupStore } from './wakeups.js';

/**
 * Sessions and everything kept with them. Each write is its own committed statement (or
 * transaction), so a crash loses at most the write in progress.
 */
export class SessionStore {
  /** Prepared once per store: a step writes several rows, and preparing costs more than running. */
  private readonly statements = new Map<string, Statement>();
  /** Made once, for the same reason: `db.transaction` builds its wrappers anew on every call. */
  private appending?: (id: string, role: string, body: string, now: number) => void;

  /** The database, for the other stores that share it (the pipeline's queue). */
  constructor(readonly db: Db) {}

  private sql(text: string): Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  /** Creates a session, with its first messages in the same transaction: no session is ever seen without them. */
  create(input: NewSession, messages: ChatMessage[] = []): SessionRow {
    const now = Date.now();
    const row = newSessionRow(input, now);
    this.db.transaction(() => {
      this.sql(
        `INSERT INTO sessions (id, title, workspace, model, parent_id, depth, status, created_at, updated_at)
           VALUES (@id, @title, @workspace, @model, @parentId, @depth, @status, @createdAt, @updatedAt)`,
      ).run(row);
      for (const message of messages) this.appendMessage(row.id, message);
    })();
    return row;
  }

  get(id: string): SessionRow {
    const row = this.sql(`SELECT ${COLUMNS} FROM sessions WHERE id = ?`).get(id) as SessionRow | undefined;
    if (!row) throw new SessionNotFoundError(`No session ${id}.`);
    return row;
  }

  /** Finds a session by id or unique id prefix, as people type them. */
  resolve(idOrPrefix: string): SessionRow {
    const rows = this.sql(`SELECT ${COLUMNS} FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2`).all(
      `${idOrPrefix.replace(/[\\%_]/g, '\\$&')}%`,
    ) as SessionRow[];
    if (rows.length === 0)
      throw new SessionNotFoundError(`No session matches "${idOrPrefix}". List them with: hearth sessions`);
    if (rows.length > 1)
      throw new SessionNotFoundError(`"${idOrPrefix}" matches several sessions; give more of the id.`);
    return rows[0]!;
  }

  /** The session `--continue` picks up: the last one a person started (a sub-agent's is part of its root's). */
  latest(workspace: string): SessionRow | undefined {
    return this.sql(
      `SELECT ${COLUMNS} FROM sessions WHERE workspace = ? AND depth = 0
         ORDER BY updated_at DESC, rowid DESC LIMIT 1`,
    ).get(workspace) as SessionRow | undefined;
  }

  /** The most recent sessions; `topLevel` leaves sub-agents' sessions out (see `subagents`). */
  list(opts: { workspace?: string; limit?: number; topLevel?: boolean } = {}): SessionSummary[] {
    const where = [opts.workspace ? 's.workspace = @workspace' : '', opts.topLevel ? 's.depth = 0' : '']
      .filter(Boolean)
      .join(' AND ');
    return this.sql(
      `${SUMMARY} ${where ? `WHERE ${where}` : ''}
         ORDER BY s.updated_at DESC, s.rowid DESC LIMIT @limit`,
    ).all({ workspace: opts.workspace, limit: opts.limit ?? 50 }) as SessionSummary[];
  }

  /** The sessions the agent of `id` started as sub-agents (not its forks), oldest first. */
  subagents(id: string): SessionSummary[] {
    return this.sql(`${SUMMARY} WHERE s.parent_id = ? AND s.depth > 0 ORDER BY s.created_at, s.rowid`).all(
      id,
    ) as SessionSummary[];
  }

  /** The sub-agents' sessions under `id` at every depth: depth first, each level oldest first. */
  subagentTree(id: string): SessionSummary[] {
    return this.subagents(id).flatMap((child) => [child, ...this.subagentTree(child.id)]);
  }

  update(id: string, fields: Partial<Pick<SessionRow, 'title' | 'model' | 'status'>>): void {
    const sets = Object.keys(fields).map((k) => `${k} = @${k}`);
    this.sql(`UPDATE sessions SET ${[...sets, 'updated_at = @now'].join(', ')} WHERE id = @id`).run({
      ...fields,
      id,
      now: Date.now(),
    });
  }

  /** Deletes a session with its sub-agents' sessions (not its forks, which stand on their own). */
  remove(id: string): void {
    this.sql(
      `WITH RECURSIVE tree(id) AS (
           SELECT ? UNION ALL SELECT s.id FROM sessions s JOIN tree t ON s.parent_id = t.id WHERE s.depth > 0)
         DELETE FROM sessions WHERE id IN tree`,
    ).run(id);
  }

  appendMessage(id: string, message: ChatMessage): void {
    this.appending ??= this.db.transaction((id: string, role: string, body: string, now: number) => {
      this.sql(
        `INSERT INTO messages (session_id, seq, role, body, created_at)
           VALUES (?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE session_id = ?), ?, ?, ?)`,
      ).run(id, id, role, body, now);
      this.sql('UPDATE sessions SET updated_at = ? WHERE id = ?').run(now, id);
    });
    this.appending(id, message.role, JSON.stringify(message), Date.now());
  }

  messages(id: string): ChatMessage[] {
    const rows = this.sql('SELECT body FROM messages WHERE session_id = ? ORDER BY seq').all(id) as Array<{
      body: string;
    }>;
    return rows.map((r) => JSON.parse(r.body) as ChatMessage);
  }

  messageCount(id: string): number {
    const row = this.sql('SELECT COALESCE(MAX(seq), -1) + 1 AS n FROM messages WHERE session_id = ?').get(id);
    return (row as { n: number }).n;
  }

  /** A new session holding a copy of another's history and state. */
  fork(id: string, opts: { before?: number } = {}): SessionRow {
    const source = this.get(id);
    return this.db.transaction(() => {
      const copy = this.create({
        workspace: source.workspace,
        model: source.model,
        title: source.title ? `${source.title} (fork)` : '',
        parentId: source.id,
      });
      this.sql(
        `INSERT INTO messages (session_id, seq, role, body, created_at)
           SELECT ?, seq, role, body, created_at FROM messages WHERE session_id = ? AND seq < ?`,
      ).run(copy.id, source.id, opts.before ?? Number.MAX_SAFE_INTEGER);
      this.sql(
        'INSERT INTO session_state (session_id, key, value) SELECT ?, key, value FROM session_state WHERE session_id = ?',
      ).run(copy.id, source.id);
      return copy;
    })();
  }

  recordUsage(id: string, usage: UsageRecord): void {
    this.sql(
      `INSERT INTO usage (session_id, model, prompt_tokens, completion_tokens, duration_ms, created_at, speed, message_seq)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      id,
      usage.model,
      usage.prompt,
      usage.completion,
      Math.round(usage.durationMs),
      Date.now(),
      speedColumn(usage.speed),
      usage.seq ?? null,
    );
  }

  recordAudit(id: string, entry: AuditEntry): void {
    this.sql(
      `INSERT INTO audit (session_id, tool, arguments, decision, rule, duration_ms, exit_code, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(...auditValues(id, entry));
  }

  audit(id: string): Array<AuditEntry & { createdAt: number }> {
    return this.sql(
      `SELECT tool, arguments, decision, rule, duration_ms AS durationMs, exit_code AS exitCode, created_at AS createdAt
         FROM audit WHERE session_id = ? ORDER BY id`,
    ).all(id) as Array<AuditEntry & { createdAt: number }>;
  }

  /** Keeps what a person sees of a call in full (`hearth sessions output` prints it back). */
  saveToolOutput(id: string, callId: string, body: string): void {
    this.sql(
      `INSERT INTO tool_outputs (session_id, call_id, body) VALUES (?, ?, ?)
         ON CONFLICT (session_id, call_id) DO UPDATE SET body = excluded.body`,
    ).run(id, callId, body);
  }

  toolOutput(id: string, callId: string): string | undefined {
    const row = this.sql('SELECT body FROM tool_outputs WHERE session_id = ? AND call_id = ?').get(
      id,
      callId,
    ) as { body: string } | undefined;
    return row?.body;
  }

  /** Sessions set to resume later (the same database). */
  wakeups(): WakeupStore {
    return new WakeupStore(this.db);
  }

  /** The session's durable key-value state, written through at once. */
  state(id: string): SessionState {
    const select = this.sql('SELECT value FROM session_state WHERE session_id = ? AND key = ?');
    const upsert = this.sql(
      `INSERT INTO session_state (session_id, key, value) VALUES (?, ?, ?)
       ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value`,
    );
    const remove = this.sql('DELETE FROM session_state WHERE session_id = ? AND key = ?');
    return {
      get(key) {
        const row = select.get(id, key) as { value: string } | undefined;
        return row === undefined ? undefined : JSON.parse(row.value);
      },
      set(key, value) {
        if (value === undefined) remove.run(id, key);
        else upsert.run(id, key, JSON.stringify(value));
      },
    };
  }
}

const COLUMNS =
  'id AS id, title AS title, workspace AS workspace, model AS model, parent_id AS parentId, depth AS depth, status AS status, created_at AS createdAt, updated_at AS updatedAt';

/** A session with its counts; the caller adds WHERE and ORDER BY. */
const SUMMARY = `SELECT ${COLUMNS.replace(/(\w+) AS/g, 's.$1 AS')},
  (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS messages,
  (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.role = 'assistant') AS turns,
  COALESCE((SELECT SUM(prompt_tokens) FROM usage u WHERE u.session_id = s.id), 0) AS promptTokens,
  COALESCE((SELECT SUM(completion_tokens) FROM usage u WHERE u.session_id = s.id), 0) AS completionTokens
  FROM sessions s`;
