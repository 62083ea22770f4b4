import type { TurnSpeed } from '../rows.js';
import { type SpeedRow, turnSpeeds, type UsageReport, type UsageTotals } from '../rows.js';
import type { Db } from './database.js';

const SUMS =
  'COUNT(*) AS requests, COALESCE(SUM(prompt_tokens), 0) AS prompt, COALESCE(SUM(completion_tokens), 0) AS completion';

/** Token usage of every model request made at or after `since` (epoch ms; undefined: all time). */
export function usageReport(db: Db, since: number | undefined): UsageReport {
  const from = since ?? 0;
  const total = db.prepare(`SELECT ${SUMS} FROM usage WHERE created_at >= ?`).get(from) as UsageTotals;
  const bySession = db
    .prepare(
      `SELECT u.session_id AS sessionId, s.title AS title, ${SUMS}
       FROM usage u JOIN sessions s ON s.id = u.session_id
       WHERE u.created_at >= ? GROUP BY u.session_id ORDER BY MAX(u.created_at) DESC`,
    )
    .all(from) as UsageReport['bySession'];
  const byModel = db
    .prepare(`SELECT model, ${SUMS} FROM usage WHERE created_at >= ? GROUP BY model ORDER BY requests DESC`)
    .all(from) as UsageReport['byModel'];
  return { total, bySession, byModel };
}

/** Tokens one session spent, over all its requests. */
export function sessionUsage(db: Db, sessionId: string): UsageTotals {
  return db.prepare(`SELECT ${SUMS} FROM usage WHERE session_id = ?`).get(sessionId) as UsageTotals;
}

/** The speeds of one session's requests, by the assistant message each made (where both are known). */
export function sessionSpeeds(db: Db, sessionId: string): TurnSpeed[] {
  return turnSpeeds(
    db
      .prepare(
        'SELECT message_seq AS seq, speed FROM usage WHERE session_id = ? AND speed IS NOT NULL AND message_seq IS NOT NULL ORDER BY id',
      )
      .all(sessionId) as SpeedRow[],
  );
}
