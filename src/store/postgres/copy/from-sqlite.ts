/**
 * Moves a user's SQLite history into the shared PostgreSQL database (`hearth storage migrate`).
 * Session by session, each in one transaction: a session already in the target (same id) is left
 * as it is, so running it again copies nothing twice, and an interrupted run resumes where it
 * stopped. Ids, times and message bodies are kept exactly.
 *
 * Other subsystems add their tables by adding a `Copier` to `copiers` (the event log's rows of a
 * session, memories that belong to none, the scheduler's jobs and runs: copy-scheduler.ts): a copier's `session` part runs inside the session's
 * transaction, its `rest` part once per run and must be idempotent by itself.
 */
import type { Db } from '../../sqlite/database.js';
import { inTransaction, type PgClient, type PgPool } from '../connection.js';
import { schedulerCopiers } from './scheduler.js';

export interface Copier {
  /** What it copies, as the summary names it ("messages", "events", "memories"). */
  name: string;
  /** Copies what belongs to one session, in the session's transaction; returns the rows copied. */
  session?(source: Db, target: PgClient, sessionId: string): Promise<number>;
  /** Copies what belongs to no session, after the sessions; returns the rows copied. */
  rest?(source: Db, target: PgPool): Promise<number>;
}

export interface MigrationProgress {
  done: number;
  total: number;
  sessionId: string;
  copied: boolean;
}

export interface MigrationSummary {
  sessions: { total: number; copied: number; skipped: number };
  /** Rows copied per copier name. */
  rows: Record<string, number>;
}

/** Copies every table a session keeps beside its row into the target, as they are. */
async function copyRows(
  source: Db,
  target: PgClient,
  sessionId: string,
  table: { from: string; to: string; columns: string[]; types: string[]; order: string },
): Promise<number> {
  const rows = source
    .prepare(
      `SELECT ${table.columns.join(', ')} FROM ${table.from} WHERE session_id = ? ORDER BY ${table.order}`,
    )
    .all(sessionId) as Array<Record<string, unknown>>;
  if (rows.length === 0) return 0;
  const columns = ['session_id', ...table.columns];
  const arrays = table.columns.map((column) => rows.map((row) => row[column] ?? null));
  await target.query(
    `INSERT INTO ${table.to} (${columns.join(', ')})
       SELECT $1::text, * FROM unnest(${table.types.map((type, i) => `$${i + 2}::${type}[]`).join(', ')})`,
    [sessionId, ...arrays],
  );
  return rows.length;
}

/** The session stores' own tables (src/store/postgres/sessions.ts). */
const sessionTables = [
  {
    name: 'messages',
    table: {
      from: 'messages',
      to: 'hearth_messages',
      columns: ['seq', 'role', 'body', 'created_at'],
      types: ['integer', 'text', 'text', 'bigint'],
      order: 'seq',
    },
  },
  {
    name: 'usage',
    table: {
      from: 'usage',
      to: 'hearth_usage',
      columns: [
        'model',
        'prompt_tokens',
        'completion_tokens',
        'duration_ms',
        'created_at',
        'speed',
        'message_seq',
      ],
      types: ['text', 'integer', 'integer', 'integer', 'bigint', 'text', 'integer'],
      order: 'id',
    },
  },
  {
    name: 'audit',
    table: {
      from: 'audit',
      to: 'hearth_audit',
      columns: ['tool', 'arguments', 'decision', 'rule', 'duration_ms', 'exit_code', 'created_at'],
      types: ['text', 'text', 'text', 'text', 'integer', 'integer', 'bigint'],
      order: 'id',
    },
  },
  {
    name: 'state',
    table: {
      from: 'session_state',
      to: 'hearth_session_state',
      columns: ['key', 'value'],
      types: ['text', 'text'],
      order: 'key',
    },
  },
  {
    name: 'tool outputs',
    table: {
      from: 'tool_outputs',
      to: 'hearth_tool_outputs',
      columns: ['call_id', 'body'],
      types: ['text', 'text'],
      order: 'call_id',
    },
  },
  {
    name: 'wake-ups',
    table: {
      from: 'wakeups',
      to: 'hearth_wakeups',
      columns: ['id', 'at', 'message', 'status', 'created_at'],
      types: ['text', 'bigint', 'text', 'text', 'bigint'],
      order: 'at, id',
    },
  },
];

/** What `hearth storage migrate` copies; append a copier for a new subsystem's tables. */
export const copiers: Copier[] = [
  ...sessionTables.map(({ name, table }) => ({
    name,
    session: (source: Db, target: PgClient, sessionId: string) => copyRows(source, target, sessionId, table),
  })),
  ...schedulerCopiers,
];

interface SourceSession {
  id: string;
  title: string;
  workspace: string;
  model: string;
  parent_id: string | null;
  depth: number;
  status: string;
  created_at: number;
  updated_at: number;
}

/**
 * Copies the sessions of `source` (oldest first, so a fork's or sub-agent's parent is there
 * before it) and then what the copiers keep outside sessions.
 */
export async function copySqliteToPostgres(
  source: Db,
  target: PgPool,
  options: { copiers?: readonly Copier[]; onProgress?: (progress: MigrationProgress) => void } = {},
): Promise<MigrationSummary> {
  const list = options.copiers ?? copiers;
  const sessions = source
    .prepare(
      'SELECT id, title, workspace, model, parent_id, depth, status, created_at, updated_at FROM sessions ORDER BY rowid',
    )
    .all() as SourceSession[];
  const summary: MigrationSummary = {
    sessions: { total: sessions.length, copied: 0, skipped: 0 },
    rows: Object.fromEntries(list.map((c) => [c.name, 0])),
  };
  for (const [i, session] of sessions.entries()) {
    const copied = await inTransaction(target, async (client) => {
      const inserted = await client.query(
        `INSERT INTO hearth_sessions (id, title, workspace, model, parent_id, depth, status, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING`,
        [
          session.id,
          session.title,
          session.workspace,
          session.model,
          session.parent_id,
          session.depth,
          session.status,
          session.created_at,
          session.updated_at,
        ],
      );
      if (inserted.rowCount === 0) return undefined;
      const rows: Record<string, number> = {};
      for (const copier of list) {
        if (copier.session) rows[copier.name] = await copier.session(source, client, session.id);
      }
      return rows;
    });
    if (copied) {
      summary.sessions.copied++;
      for (const [name, n] of Object.entries(copied)) summary.rows[name] = (summary.rows[name] ?? 0) + n;
    } else summary.sessions.skipped++;
    options.onProgress?.({ done: i + 1, total: sessions.length, sessionId: session.id, copied: !!copied });
  }
  for (const copier of list) {
    if (copier.rest)
      summary.rows[copier.name] = (summary.rows[copier.name] ?? 0) + (await copier.rest(source, target));
  }
  return summary;
}
