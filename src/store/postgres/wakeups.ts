/**
 * Wake-ups in the shared database (`hearth_wakeups`, migration 9), beside the sessions kept there:
 * added on any machine, fired once by whichever scheduler claims them first (`markFired` inside
 * its claiming transaction).
 */

import pg from 'pg';
import type { WakeupRow } from '../rows.js';
import {
  MAX_PENDING_WAKEUPS,
  newWakeup,
  type WakeupStorage,
  wakeupLimitError,
} from '../scheduler-storage.js';
import { inTransaction, type PgPool } from './connection.js';
import type { Queryable } from './scheduler.js';

const isPool = (db: Queryable): db is PgPool => db instanceof pg.Pool;

const COLUMNS = `id, session_id AS "sessionId", at::float8 AS at, message, status, created_at::float8 AS "createdAt"`;

export class PostgresWakeups implements WakeupStorage {
  constructor(private readonly db: Queryable) {}

  async add(sessionId: string, at: number, message: string, now: number): Promise<WakeupRow> {
    const row = newWakeup(sessionId, at, message, now);
    // Counted and added under a lock of the session's wake-ups, taken in a transaction of its own
    // (or the caller's): adds racing on several machines each see the others' rows.
    const insert = async (tx: Queryable) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('hearth_wakeups'), hashtext($1))`, [sessionId]);
      const { rowCount } = await tx.query(
        `INSERT INTO hearth_wakeups (id, session_id, at, message, status, created_at)
         SELECT $1, $2, $3, $4, 'pending', $5
         WHERE (SELECT count(*) FROM hearth_wakeups WHERE session_id = $2 AND status = 'pending') < $6`,
        [row.id, sessionId, at, message, now, MAX_PENDING_WAKEUPS],
      );
      return rowCount;
    };
    const rowCount = isPool(this.db) ? await inTransaction(this.db, insert) : await insert(this.db);
    if (rowCount === 1) return row;
    const pending = await this.list({ sessionId, pendingOnly: true, limit: MAX_PENDING_WAKEUPS + 1 });
    throw wakeupLimitError(sessionId, pending.length);
  }

  async due(now: number): Promise<WakeupRow[]> {
    const { rows } = await this.db.query<WakeupRow>(
      `SELECT ${COLUMNS} FROM hearth_wakeups WHERE status = 'pending' AND at <= $1 ORDER BY at, id`,
      [now],
    );
    return rows;
  }

  async nextAt(): Promise<number | undefined> {
    const { rows } = await this.db.query<{ at: number | null }>(
      "SELECT min(at)::float8 AS at FROM hearth_wakeups WHERE status = 'pending'",
    );
    return rows[0]?.at ?? undefined;
  }

  async markFired(id: string): Promise<boolean> {
    const { rowCount } = await this.db.query(
      "UPDATE hearth_wakeups SET status = 'fired' WHERE id = $1 AND status = 'pending'",
      [id],
    );
    return rowCount === 1;
  }

  async cancel(idOrPrefix: string): Promise<WakeupRow | undefined> {
    const { rows } = await this.db.query<WakeupRow>(
      `SELECT ${COLUMNS} FROM hearth_wakeups WHERE id LIKE $1 AND status = 'pending' LIMIT 2`,
      [`${idOrPrefix.replace(/[\\%_]/g, '')}%`],
    );
    if (rows.length !== 1) return undefined;
    const { rowCount } = await this.db.query(
      "UPDATE hearth_wakeups SET status = 'cancelled' WHERE id = $1 AND status = 'pending'",
      [rows[0]!.id],
    );
    return rowCount === 1 ? { ...rows[0]!, status: 'cancelled' } : undefined;
  }

  async list(
    filter: { sessionId?: string; pendingOnly?: boolean; limit?: number } = {},
  ): Promise<WakeupRow[]> {
    const { rows } = await this.db.query<WakeupRow>(
      `SELECT ${COLUMNS} FROM hearth_wakeups
       WHERE ($1::text IS NULL OR session_id = $1) AND (NOT $2 OR status = 'pending')
       ORDER BY at DESC LIMIT $3`,
      [filter.sessionId ?? null, filter.pendingOnly === true, filter.limit ?? 50],
    );
    return rows;
  }
}
