/**
 * Run leases in the shared database (see ../run-lease.ts for what they are for): one row per
 * session being run, in `hearth_session_leases` (migration 7). Taking a lease is one statement,
 * an upsert that only overwrites a row whose expiry has passed or that is this holder's own, so of
 * two processes taking one session at once exactly one gets it. The holder renews it every third
 * of its length while the run goes on and deletes it at the end; a holder that died leaves a row
 * that lapses. Expiries are epoch milliseconds of the holder's clock compared with the taker's, so
 * the machines' clocks must agree to well within the lease (NTP does); tests inject a clock.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { type Clock, systemClock, type TimerHandle } from '../../util/clock.js';
import type { LeaseRefusal, RunLease, SessionLeases } from '../run-lease.js';
import type { PgPool } from './connection.js';

export interface LeaseHolder {
  /** How other processes name this one ("hearth serve on gpu-box (pid 4242)"). */
  label: string;
  clock?: Clock;
  /** How long a lease lasts without renewal; default 30 s. */
  ttlMs?: number;
}

const DEFAULT_TTL_MS = 30_000;

export class PostgresLeases implements SessionLeases {
  /** This holder: one per storage object, so two in one process are kept apart like two processes. */
  readonly instance = randomUUID();
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private readonly held = new Set<string>();

  constructor(
    private readonly pool: PgPool,
    private readonly holder: LeaseHolder,
  ) {
    this.clock = holder.clock ?? systemClock;
    this.ttlMs = holder.ttlMs ?? DEFAULT_TTL_MS;
  }

  async take(sessionId: string): Promise<RunLease | LeaseRefusal> {
    if (this.held.has(sessionId)) return { heldBy: `another run in ${this.holder.label}` };
    this.held.add(sessionId);
    try {
      const now = this.clock.now();
      const { rowCount } = await this.pool.query(
        `insert into hearth_session_leases as l (session_id, instance, host, pid, label, expires_at)
           values ($1, $2, $3, $4, $5, $6)
           on conflict (session_id) do update
             set instance = excluded.instance, host = excluded.host, pid = excluded.pid,
                 label = excluded.label, expires_at = excluded.expires_at
             where l.expires_at < $7 or l.instance = excluded.instance`,
        [sessionId, this.instance, hostname(), process.pid, this.holder.label, now + this.ttlMs, now],
      );
      if (rowCount === 1) return this.hold(sessionId, now + this.ttlMs);
      this.held.delete(sessionId);
      return { heldBy: (await this.heldElsewhere(sessionId)) ?? 'another process' };
    } catch (err) {
      this.held.delete(sessionId);
      throw err;
    }
  }

  async heldElsewhere(sessionId: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ label: string }>(
      `select label from hearth_session_leases where session_id = $1 and expires_at >= $2 and instance <> $3`,
      [sessionId, this.clock.now(), this.instance],
    );
    return rows[0]?.label;
  }

  /** Renews the lease every third of its length until released or lost. */
  private hold(sessionId: string, expiresAt: number): RunLease {
    const lost = new AbortController();
    let timer: TimerHandle | undefined;
    let done = false;
    const stop = () => {
      done = true;
      this.clock.clearTimeout(timer);
      this.held.delete(sessionId);
    };
    const renew = async () => {
      const now = this.clock.now();
      try {
        const { rowCount } = await this.pool.query(
          `update hearth_session_leases set expires_at = $3 where session_id = $1 and instance = $2`,
          [sessionId, this.instance, now + this.ttlMs],
        );
        if (rowCount === 1) expiresAt = now + this.ttlMs;
        else return lose('another process took it over');
      } catch (err) {
        // The database is away: the lease holds until its expiry, and the run with it.
        if (this.clock.now() >= expiresAt)
          return lose(`it lapsed while the database was away (${(err as Error).message})`);
      }
      if (!done) schedule();
    };
    const lose = (why: string) => {
      stop();
      lost.abort(new Error(`The run lease of session ${sessionId} was lost: ${why}.`));
    };
    const schedule = () => {
      timer = this.clock.setTimeout(() => void renew(), Math.max(100, this.ttlMs / 3));
      timer.unref();
    };
    schedule();
    return {
      sessionId,
      lost: lost.signal,
      release: async () => {
        if (done) return;
        stop();
        await this.pool
          .query('delete from hearth_session_leases where session_id = $1 and instance = $2', [
            sessionId,
            this.instance,
          ])
          .catch(() => undefined); // the database is away: the row lapses on its own
      },
    };
  }
}
