/**
 * Claims of scheduled slots in the PostgreSQL database several machines share. Each machine's
 * scheduler keeps its runs in its own database and decides the same slots as the others; a slot
 * that runs here (not on the queue, where `WorkQueue.addOnce` keys it) is run by the scheduler
 * whose claim came first. A claim is kept for good, like the queue's task keys.
 */
import { openPostgres, type PgPool } from './connection.js';

export type SlotClaim = { won: true } | { won: false; host: string };

export class PostgresSlotClaims {
  private constructor(private readonly pool: PgPool) {}

  static async open(url: string): Promise<PostgresSlotClaims> {
    return new PostgresSlotClaims(await openPostgres(url, { max: 2 }));
  }

  /**
   * Claims a job's slot for `claimer` (a scheduler's machine and database). Won when this claimer
   * holds it, now or from before a restart; otherwise says which host holds it.
   */
  async claim(jobId: string, slotAt: number, claimer: string, host: string): Promise<SlotClaim> {
    const inserted = await this.pool.query(
      `insert into hearth_slot_claims (job_id, slot_at, claimer, host) values ($1, $2, $3, $4)
       on conflict (job_id, slot_at) do nothing`,
      [jobId, slotAt, claimer, host],
    );
    if (inserted.rowCount === 1) return { won: true };
    // A statement of its own: it sees the claim a concurrent insert committed, which the insert's
    // snapshot did not.
    const { rows } = await this.pool.query<{ claimer: string; host: string }>(
      'select claimer, host from hearth_slot_claims where job_id = $1 and slot_at = $2',
      [jobId, slotAt],
    );
    const holder = rows[0];
    if (!holder) throw new Error(`the claim of job ${jobId}'s slot was not recorded`);
    return holder.claimer === claimer ? { won: true } : { won: false, host: holder.host };
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
