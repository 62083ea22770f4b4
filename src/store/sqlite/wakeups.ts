import type { WakeupRow } from '../rows.js';
import {
  MAX_PENDING_WAKEUPS,
  newWakeup,
  type WakeupStorage,
  wakeupLimitError,
} from '../scheduler-storage.js';
import type { Db } from './database.js';

const COLUMNS = 'id, session_id AS sessionId, at, message, status, created_at AS createdAt';

/** Wake-ups in the SQLite file, beside the sessions they resume (see scheduler-storage.ts). */
export class WakeupStore implements WakeupStorage {
  constructor(private readonly db: Db) {}

  async add(sessionId: string, at: number, message: string, now: number): Promise<WakeupRow> {
    return this.db
      .transaction(() => {
        const pending = this.db
          .prepare("SELECT COUNT(*) AS n FROM wakeups WHERE session_id = ? AND status = 'pending'")
          .get(sessionId) as { n: number };
        if (pending.n >= MAX_PENDING_WAKEUPS) throw wakeupLimitError(sessionId, pending.n);
        const row = newWakeup(sessionId, at, message, now);
        this.db
          .prepare(
            'INSERT INTO wakeups (id, session_id, at, message, status, created_at) VALUES (@id, @sessionId, @at, @message, @status, @createdAt)',
          )
          .run(row);
        return row;
      })
      .immediate();
  }

  async due(now: number): Promise<WakeupRow[]> {
    return this.db
      .prepare(`SELECT ${COLUMNS} FROM wakeups WHERE status = 'pending' AND at <= ? ORDER BY at, id`)
      .all(now) as WakeupRow[];
  }

  async nextAt(): Promise<number | undefined> {
    const row = this.db.prepare("SELECT MIN(at) AS at FROM wakeups WHERE status = 'pending'").get() as {
      at: number | null;
    };
    return row.at ?? undefined;
  }

  async markFired(id: string): Promise<boolean> {
    return (
      this.db.prepare("UPDATE wakeups SET status = 'fired' WHERE id = ? AND status = 'pending'").run(id)
        .changes === 1
    );
  }

  async cancel(idOrPrefix: string): Promise<WakeupRow | undefined> {
    const row = this.db
      .prepare(`SELECT ${COLUMNS} FROM wakeups WHERE id LIKE ? AND status = 'pending' LIMIT 2`)
      .all(`${idOrPrefix.replace(/[\\%_]/g, '')}%`) as WakeupRow[];
    if (row.length !== 1) return undefined;
    this.db.prepare("UPDATE wakeups SET status = 'cancelled' WHERE id = ?").run(row[0]!.id);
    return { ...row[0]!, status: 'cancelled' };
  }

  async list(
    filter: { sessionId?: string; pendingOnly?: boolean; limit?: number } = {},
  ): Promise<WakeupRow[]> {
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
