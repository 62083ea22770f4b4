/**
 * Run leases in the shared database (see ../run-lease.ts for what they are for): one row per
 * session being run, in `hearth_session_leases` (migration 8). Taking a lease is one statement,
 * an upsert that only overwrites a row whose expiry has passed or that is this holder's own, so of
 * two processes taking one session at once exactly one gets it. Expiries are epoch milliseconds on
 * the database server's clock (`hearth_now_ms()`, migration 9), so machines whose clocks drift apart
 * still agree on when a lease lapsed; tests inject a clock instead. A holder's process is not looked
 * at: it may run on another machine, so only its expiry tells that it died.
 */
import { hostname } from 'node:os';
import { type LeaseHolder, type LeaseTable, StoredLeases } from '../run-lease.js';
import { leaseNow, type PgPool } from './connection.js';

export function postgresLeases(pool: PgPool, holder: LeaseHolder): StoredLeases {
  return new StoredLeases(new PostgresLeaseTable(pool, holder.label), holder);
}

class PostgresLeaseTable implements LeaseTable {
  constructor(
    private readonly pool: PgPool,
    private readonly label: string,
  ) {}

  async claim(sessionId: string, instance: string, now: number | undefined, ttlMs: number): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `insert into hearth_session_leases as l (session_id, instance, host, pid, label, expires_at)
         values ($1, $2, $3, $4, $5, ${leaseNow(6)} + $7)
         on conflict (session_id) do update
           set instance = excluded.instance, host = excluded.host, pid = excluded.pid,
               label = excluded.label, expires_at = excluded.expires_at
           where l.expires_at < ${leaseNow(6)} or l.instance = excluded.instance`,
      [sessionId, instance, hostname(), process.pid, this.label, now ?? null, ttlMs],
    );
    return rowCount === 1;
  }

  async renew(sessionId: string, instance: string, now: number | undefined, ttlMs: number): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `update hearth_session_leases set expires_at = ${leaseNow(3)} + $4
       where session_id = $1 and instance = $2`,
      [sessionId, instance, now ?? null, ttlMs],
    );
    return rowCount === 1;
  }

  async drop(sessionId: string, instance: string): Promise<void> {
    await this.pool.query('delete from hearth_session_leases where session_id = $1 and instance = $2', [
      sessionId,
      instance,
    ]);
  }

  async liveHolder(
    sessionId: string,
    instance: string,
    now: number | undefined,
  ): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ label: string }>(
      `select label from hearth_session_leases
       where session_id = $1 and expires_at >= ${leaseNow(2)} and instance <> $3`,
      [sessionId, now ?? null, instance],
    );
    return rows[0]?.label;
  }
}
