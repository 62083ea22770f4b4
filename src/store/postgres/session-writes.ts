/**
 * The one-statement writes of PostgreSQL session storage (./sessions.ts), shared by the storage's
 * own methods and by a running session's journal, which sends the same statements in order.
 */

import type { ChatMessage } from '../../llm/types.js';
import {
  type AuditEntry,
  auditValues,
  type NewSession,
  newSessionRow,
  speedColumn,
  type UsageRecord,
} from '../rows.js';
import type { SessionFields } from '../session-storage.js';
import type { PgClient, PgPool } from './connection.js';

/** A pool or one client inside a transaction: either can send these statements. */
type Queryable = Pick<PgPool, 'query'> | PgClient;

export async function insertSession(db: Queryable, input: NewSession, messages: ChatMessage[] = []) {
  const row = newSessionRow(input, Date.now());
  await db.query(
    `INSERT INTO hearth_sessions (id, title, workspace, model, parent_id, depth, status, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      row.id,
      row.title,
      row.workspace,
      row.model,
      row.parentId,
      row.depth,
      row.status,
      row.createdAt,
      row.updatedAt,
    ],
  );
  for (const message of messages) await appendMessage(db, row.id, message);
  return row;
}

export async function updateSession(db: Queryable, id: string, fields: SessionFields): Promise<void> {
  const params: unknown[] = [id, Date.now()];
  const sets = Object.entries(fields)
    .filter(([key]) => key === 'title' || key === 'model' || key === 'status')
    .map(([key, value]) => `${key} = $${params.push(value)}`);
  await db.query(
    `UPDATE hearth_sessions SET ${[...sets, 'updated_at = $2'].join(', ')} WHERE id = $1`,
    params,
  );
}

export async function appendMessage(db: Queryable, id: string, message: ChatMessage): Promise<void> {
  await db.query('SELECT hearth_append_message($1, $2, $3, $4)', [
    id,
    message.role,
    JSON.stringify(message),
    Date.now(),
  ]);
}

export async function recordUsage(db: Queryable, id: string, usage: UsageRecord): Promise<void> {
  await db.query(
    `INSERT INTO hearth_usage (session_id, model, prompt_tokens, completion_tokens, duration_ms, created_at, speed, message_seq)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      id,
      usage.model,
      usage.prompt,
      usage.completion,
      Math.round(usage.durationMs),
      Date.now(),
      speedColumn(usage.speed),
      usage.seq ?? null,
    ],
  );
}

export async function recordAudit(db: Queryable, id: string, entry: AuditEntry): Promise<void> {
  await db.query(
    `INSERT INTO hearth_audit (session_id, tool, arguments, decision, rule, duration_ms, exit_code, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    auditValues(id, entry),
  );
}

export async function saveToolOutput(db: Queryable, id: string, callId: string, body: string): Promise<void> {
  await db.query(
    `INSERT INTO hearth_tool_outputs (session_id, call_id, body) VALUES ($1, $2, $3)
       ON CONFLICT (session_id, call_id) DO UPDATE SET body = excluded.body`,
    [id, callId, body],
  );
}
