/** The PostgreSQL side of ../usage-report.ts: the same report over `hearth_usage`, every machine's requests. */
import { type SpeedRow, type TurnSpeed, turnSpeeds, type UsageReport, type UsageTotals } from '../rows.js';
import type { PgPool } from './connection.js';

// count and sum are bigint and numeric in PostgreSQL, which `pg` hands back as strings.
const SUMS = `count(*)::float8 AS requests, coalesce(sum(prompt_tokens), 0)::float8 AS prompt,
  coalesce(sum(completion_tokens), 0)::float8 AS completion`;

export async function usageReport(pool: PgPool, since: number | undefined): Promise<UsageReport> {
  const from = [since ?? 0];
  const [total, bySession, byModel] = await Promise.all([
    pool.query<UsageTotals>(`SELECT ${SUMS} FROM hearth_usage WHERE created_at >= $1`, from),
    pool.query<UsageReport['bySession'][number]>(
      `SELECT u.session_id AS "sessionId", s.title AS title, ${SUMS}
       FROM hearth_usage u JOIN hearth_sessions s ON s.id = u.session_id
       WHERE u.created_at >= $1 GROUP BY u.session_id, s.title ORDER BY max(u.created_at) DESC`,
      from,
    ),
    pool.query<UsageReport['byModel'][number]>(
      `SELECT model, ${SUMS} FROM hearth_usage WHERE created_at >= $1 GROUP BY model ORDER BY requests DESC, model`,
      from,
    ),
  ]);
  return { total: total.rows[0]!, bySession: bySession.rows, byModel: byModel.rows };
}

export async function sessionUsage(pool: PgPool, sessionId: string): Promise<UsageTotals> {
  const { rows } = await pool.query<UsageTotals>(`SELECT ${SUMS} FROM hearth_usage WHERE session_id = $1`, [
    sessionId,
  ]);
  return rows[0]!;
}

export async function sessionCount(pool: PgPool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM hearth_sessions');
  return rows[0]!.n;
}

export async function sessionSpeeds(pool: PgPool, sessionId: string): Promise<TurnSpeed[]> {
  const { rows } = await pool.query<SpeedRow>(
    `SELECT message_seq AS seq, speed FROM hearth_usage
       WHERE session_id = $1 AND speed IS NOT NULL AND message_seq IS NOT NULL ORDER BY id`,
    [sessionId],
  );
  return turnSpeeds(rows);
}
