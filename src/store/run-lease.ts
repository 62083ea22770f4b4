/**
 * A session's run lease: whatever runs a turn of a session (the gateway, `hearth worker`, the
 * scheduler's runner, the CLI, the library) holds it for that turn, so one conversation never has
 * two writers. `AgentSession` takes it at the start of every run and compaction and gives it back
 * at the end; the gateway asks `heldElsewhere` to show a session another process runs read-only.
 *
 * Both backends keep a row per session being run, naming its holder (host, pid, a random id per
 * storage object, so two storage objects of one process are kept apart like two processes) and an
 * expiry. `StoredLeases` below is what they share: turn-taking within the storage object, and a
 * lease per run on the one lease primitive (leases.ts: one atomic claim in the table, renewal on a
 * timer every third of the lease, never a write per step, and telling the run when it lost it). A holder that died stops renewing; once its
 * expiry passed, another takes the session over. The tables (`LeaseTable`):
 * - PostgreSQL (`postgres/run-leases.ts`): processes of several machines.
 * - SQLite (`sqlite-leases.ts`): processes of one machine on one file (a `hearth serve` and a
 *   `hearth --resume`, the scheduler, a worker). There a holder whose process is gone is taken over
 *   at once, without waiting for its expiry (src/util/process-identity.ts tells dead from alive).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock } from '../util/clock.js';
import { Lease, type LeaseOps } from './leases.js';

/** A held lease; `release` is idempotent. */
export interface RunLease {
  readonly sessionId: string;
  /** Aborted when the lease was lost (not renewed in time; another holder may have it now). */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

/** Who holds a session's lease, as people read it ("hearth worker on gpu-box (pid 4242)"). */
export interface LeaseRefusal {
  heldBy: string;
}

export interface SessionLeases {
  /** Takes the session's lease for a run; a refusal naming the holder while another holds it. */
  take(sessionId: string): Promise<RunLease | LeaseRefusal>;
  /** Who else holds a live lease of the session; undefined when nobody does (or this holder does). */
  heldElsewhere(sessionId: string): Promise<string | undefined>;
}

export function refused(taken: RunLease | LeaseRefusal): taken is LeaseRefusal {
  return 'heldBy' in taken;
}

/** What a run refused by a lease is told: where the session runs, that nothing changed, and what to do. */
export function leaseRefusal(sessionId: string, heldBy: string): string {
  return `Session ${sessionId} is running in ${heldBy} right now, so it was not run here and nothing was added to it. Wait for that run to end (or stop it there), then try again.`;
}

/** Who takes leases: one storage object, named for people, with its clock and lease length. */
export interface LeaseHolder {
  /** How other processes name this one ("hearth serve on gpu-box (pid 4242)"). */
  label: string;
  /**
   * The time leases are taken, renewed and judged by; default each table's own: the database
   * server's on PostgreSQL (machines whose clocks drift apart then still agree on expiries), this
   * machine's on SQLite. Tests give one to simulate time.
   */
  clock?: Clock;
  /** How long a lease lasts without renewal; default 30 s. */
  ttlMs?: number;
}

/** The name of a process that did not give one. */
export function defaultHolder(): LeaseHolder {
  return { label: `hearth on ${hostname()} (pid ${process.pid})` };
}

const DEFAULT_TTL_MS = 30_000;

/**
 * The rows of a backend's lease table; every method is one atomic statement (or transaction).
 * `now` is the holder's injected time, or undefined for the table's own clock (see `LeaseHolder`).
 */
export interface LeaseTable {
  /**
   * Writes `instance`'s row for the session, expiring `ttlMs` after `now`, unless another holder's
   * row is still live at `now`; true when written.
   */
  claim(sessionId: string, instance: string, now: number | undefined, ttlMs: number): Promise<boolean>;
  /** Moves the expiry of `instance`'s row to `ttlMs` after `now`; false when the row is no longer its. */
  renew(sessionId: string, instance: string, now: number | undefined, ttlMs: number): Promise<boolean>;
  /** Deletes `instance`'s row, if it still is. */
  drop(sessionId: string, instance: string): Promise<void>;
  /** The label of a holder other than `instance` whose row is live at `now`. */
  liveHolder(sessionId: string, instance: string, now: number | undefined): Promise<string | undefined>;
}

/** The leases of one storage object over a backend's table (see the header). */
export class StoredLeases implements SessionLeases {
  /** This holder: one per storage object, so two in one process are kept apart like two processes. */
  readonly instance = randomUUID();
  /** The time given to the table: the injected clock's, else none (the table's own). */
  private readonly tableNow: () => number | undefined;
  private readonly ttlMs: number;
  /** Sessions this object runs now: its own runs of one session take turns without a statement. */
  private readonly held = new Set<string>();

  constructor(
    private readonly table: LeaseTable,
    private readonly holder: LeaseHolder,
  ) {
    const injected = holder.clock;
    this.tableNow = injected ? () => injected.now() : () => undefined;
    this.ttlMs = holder.ttlMs ?? DEFAULT_TTL_MS;
  }

  async take(sessionId: string): Promise<RunLease | LeaseRefusal> {
    if (this.held.has(sessionId)) return { heldBy: `another run in ${this.holder.label}` };
    this.held.add(sessionId);
    try {
      const lease = this.lease(sessionId);
      if ((await lease.acquire()) !== 'held') return this.running(sessionId, lease);
      this.held.delete(sessionId);
      return { heldBy: (await this.heldElsewhere(sessionId)) ?? 'another process' };
    } catch (err) {
      this.held.delete(sessionId);
      throw err;
    }
  }

  async heldElsewhere(sessionId: string): Promise<string | undefined> {
    return this.table.liveHolder(sessionId, this.instance, this.tableNow());
  }

  /**
   * The session's lease on the table, renewed every third of its length (leases.ts); `take` adds
   * the turn-taking of this storage object's own runs (test/store/leases.test.ts drives it bare).
   */
  lease(sessionId: string): Lease {
    return new Lease(this.ops(sessionId), {
      ttlMs: this.ttlMs,
      clock: this.holder.clock,
      name: `The run lease of session ${sessionId}`,
    });
  }

  /** The session's row in the table, as the lease primitive works it. */
  ops(sessionId: string): LeaseOps {
    const { table, instance, ttlMs } = this;
    return {
      acquire: async () =>
        (await table.claim(sessionId, instance, this.tableNow(), ttlMs)) ? 'acquired' : 'held',
      renew: () => table.renew(sessionId, instance, this.tableNow(), ttlMs),
      release: () => table.drop(sessionId, instance),
    };
  }

  private running(sessionId: string, lease: Lease): RunLease {
    let done = false;
    const end = () => {
      done = true;
      this.held.delete(sessionId);
    };
    lease.lost.addEventListener('abort', end, { once: true });
    return {
      sessionId,
      lost: lease.lost,
      release: async () => {
        if (done) return;
        end();
        // The database is away: the row lapses on its own.
        await lease.release().catch(() => undefined);
      },
    };
  }
}
