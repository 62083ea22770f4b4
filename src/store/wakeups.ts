import { randomBytes } from 'node:crypto';
import type { Db } from './database.js';

export type WakeupStatus = 'pending' | 'fired' | 'cancelled';

export interface WakeupRow {
  id: string;
  sessionId: string;
  at: number;
  message: string;
  status: WakeupStatus;
  createdAt: number;
}

/** A session may hold this many pending wake-ups: a model stuck in a loop cannot fill the table. */
export const MAX_PENDING_WAKEUPS = 10;

export class WakeupLimitError extends Error {
  override name = 'WakeupLimitError';
}

const COLUMNS = 'id, session_id AS sessionId, at, message, status, created_at AS createdAt';

/** Sessions set to resume at a time with a message; the scheduler fires them. */
export class WakeupStore {
  constructor(readonly db: Db) {}

  add(sessionId: string, at: number, message: string, now: number): WakeupRow {
    return this.db
      .transaction(() => {
        const pending = this.db
          .prepare("SELECT COUNT(*) AS n FROM wakeups WHERE session_id = ? AND status = 'pending'")
          .get(sessionId) as { n: number };
        if (pending.n >= MAX_PENDING_WAKEUPS) {
          throw new WakeupLimitError(
            `Session ${sessionId} already has ${pending.n} pending wake-ups (the limit); cancel one first.`,
          );
        }
        const row: WakeupRow = {
          id: randomBytes(4).toString('hex'),
          sessionId,
          at,
          message,
          status: 'pending',
          createdAt: now,
        };
        this.db
          .prepare(
            'INSERT INTO wakeups (id, session_id, at, message, status, created_at) VALUES (@id, @sessionId, @at, @message, @status, @createdAt)',
          )
          .run(row);
        return row;
      })
      .immediate();
  }

  /**
   * Pending wake-ups due by `now`, oldest first. Their sessions may be kept elsewhere (PostgreSQL):
   * the scheduler finds them through the session storage.
   */
  due(now: number): WakeupRow[] {
    return this.db
      .prepare(`SELECT ${COLUMNS} FROM wakeups WHERE status = 'pending' AND at <= ? ORDER BY at, id`)
      .all(now) as WakeupRow[];
  }

  /** The earliest pending time, to sleep until. */
  nextAt(): number | undefined {
    const row = this.db.prepare("SELECT MIN(at) AS at FROM wakeups WHERE status = 'pending'").get() as {
      at: number | null;
    };
    return row.at ?? undefined;
  }

  /** Pending → fired; false when another process fired it first. Call inside the claiming transaction. */
  markFired(id: string): boolean {
    return (
      this.db.prepare("UPDATE wakeups SET status = 'fired' WHERE id = ? AND status = 'pending'").run(id)
        .changes === 1
    );
  }

  cancel(idOrPrefix: string): WakeupRow | undefined {
    const row = this.db
      .prepare(`SELECT ${COLUMNS} FROM wakeups WHERE id LIKE ? AND status = 'pending' LIMIT 2`)
      .all(`${idOrPrefix.replace(/[\\%_]/g, '')}%`) as WakeupRow[];
    if (row.length !== 1) return undefined;
    this.db.prepare("UPDATE wakeups SET status = 'cancelled' WHERE id = ?").run(row[0]!.id);
    return { ...row[0]!, status: 'cancelled' };
  }

  list(filter: { sessionId?: string; pendingOnly?: boolean; limit?: number } = {}): WakeupRow[] {
    const where = [
      filter.sessionId ? 'session_id = @sessionId' : '',
      filter.pendingOnly ? "status = 'pending'" : '',
    ].filter(Boolean);
    return this.db
      .prepare(
        `SELECT ${COLUMNS} FROM wakeups ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY at DESC LIMIT @limit`,
      )
      .all({ sessionId: filter.sessionId, limit: filter.limit ?? 50 }) as WakeupRow[];
  }
}
