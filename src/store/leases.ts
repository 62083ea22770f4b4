/**
 * The one lease primitive: a holder takes a row of some table for a while, renews it every third
 * of its length, gives it back, and is told (an AbortSignal) when it lost it. Every lease of Hearth
 * runs on it: a session's run lease (run-lease.ts), the scheduler's lease and its runs'
 * (scheduler/scheduler-lease.ts), a pipeline worker's hold on a workspace with the task in hand
 * (pipeline/lease-keeper.ts) and a `hearth worker` process's lease (cluster/worker.ts).
 *
 * This file owns the timing and the loss; a backend supplies three small operations on its table
 * (`LeaseOps`), each one atomic statement. Expiries are judged by the table: on PostgreSQL by the
 * database server's clock (`leaseNow`/`hearth_now_ms()` in the SQL, so machines whose clocks drift
 * apart still agree), on SQLite by this machine's. Taking over a lapsed lease is the table's too:
 * its `acquire` overwrites a row whose expiry passed. The local clock (injected for tests) only
 * says when to renew and when a lease the database did not renew in time has surely lapsed: the
 * lease is lost at its expiry even while a renewal still waits for an answer (a database behind a
 * dead link may not answer for minutes, and by then another process may hold the row).
 */
import { type Clock, systemClock, type TimerHandle } from '../util/clock.js';

/**
 * What taking a lease found: `acquired` when the holder did not have it (a fresh take, or a
 * takeover from one that stopped renewing), `renewed` when it did, `held` when another has it.
 */
export type LeaseClaim = 'acquired' | 'renewed' | 'held';

/** A backend's operations on one lease's row; each is one atomic statement (or transaction). */
export interface LeaseOps {
  /**
   * Takes the row, or keeps it when it is this holder's; overwrites a row whose expiry passed. A
   * table that cannot tell a take from a renewal says `acquired` for both.
   */
  acquire(): Promise<LeaseClaim>;
  /** Moves the row's expiry a lease on; false when the row is no longer this holder's. */
  renew(): Promise<boolean>;
  /** Gives the row up, if it still is this holder's. */
  release(): Promise<void>;
}

export interface LeaseOptions {
  /** How long the lease lasts without renewal. */
  ttlMs: number;
  /** When to renew and when the lease surely lapsed; tests give one to simulate time. */
  clock?: Clock;
  /** How a loss names the lease: "The run lease of session s1" (… "was lost: why."). */
  name: string;
  /** A renewal failed for want of the database: the lease holds on until its expiry. */
  onTrouble?(error: Error): void;
  /**
   * False: no loss at the expiry, only when a renewal finds the lease gone, and renewals go on
   * every third of the lease whether or not the last one answered yet (a scheduler's runs: a
   * lapsed run is the other scheduler's to record as interrupted; the run here ends on its own).
   * One still waiting for its answer is not joined by another: a database away for an hour would
   * otherwise find 180 renewals queued for the pool when it came back.
   */
  watchExpiry?: boolean;
}

interface Hold {
  controller: AbortController;
  renewal?: TimerHandle;
  deadline?: TimerHandle;
  /** Why the last renewal failed, for the message when the lease runs out. */
  trouble: string;
  /** A renewal is waiting for the table's answer. */
  renewing?: boolean;
}

/** One lease of one holder; it may be taken, lost and taken again. */
export class Lease {
  private readonly clock: Clock;
  private hold: Hold | undefined;
  /** The signal of the current hold, or of the last one (aborted) when it was lost. */
  private signal: AbortSignal = new AbortController().signal;

  constructor(
    private readonly ops: LeaseOps,
    private readonly options: LeaseOptions,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  /** Whether the holder has the lease now, as far as its renewals know. */
  get held(): boolean {
    return this.hold !== undefined;
  }

  /** Aborted when the lease was lost: a renewal found it gone, or none went through before its expiry. */
  get lost(): AbortSignal {
    return this.signal;
  }

  /**
   * Takes the lease, or renews it when held (a take is a renewal too: the timers start over). A
   * holder refused while it thought it held the lease has lost it. Errors of the table propagate.
   */
  async acquire(): Promise<LeaseClaim> {
    const at = this.clock.now();
    const claim = await this.ops.acquire();
    if (claim === 'held') {
      if (this.hold) this.lose(this.hold, 'another process took it over');
      return claim;
    }
    // While held, a take is a renewal whatever the table tells (a plain claim cannot tell).
    const renewal = this.hold !== undefined;
    this.keep(at);
    return renewal ? 'renewed' : claim;
  }

  /** Holds a lease whose row was written some other way (a scheduler's run is leased as it is recorded). */
  adopt(): void {
    this.keep(this.clock.now());
  }

  /** Stops renewing and gives the row up (also when not held: the operation is conditional). */
  async release(): Promise<void> {
    if (this.hold) this.stop(this.hold);
    await this.ops.release();
  }

  /** Holds on from `at` (when the row's expiry was last moved): renewal, then the deadline. */
  private keep(at: number): void {
    let hold = this.hold;
    if (!hold) {
      hold = { controller: new AbortController(), trouble: 'the database did not answer in time' };
      this.hold = hold;
      this.signal = hold.controller.signal;
    }
    this.scheduleRenewal(hold);
    this.expireAt(hold, at + this.options.ttlMs);
  }

  private scheduleRenewal(hold: Hold): void {
    this.clock.clearTimeout(hold.renewal);
    hold.renewal = this.clock.setTimeout(
      () => {
        if (this.options.watchExpiry === false) this.scheduleRenewal(hold);
        void this.renew(hold);
      },
      Math.max(100, this.options.ttlMs / 3),
    );
    hold.renewal.unref();
  }

  private expireAt(hold: Hold, at: number): void {
    if (this.options.watchExpiry === false) return;
    this.clock.clearTimeout(hold.deadline);
    hold.deadline = this.clock.setTimeout(
      () => this.lose(hold, `it lapsed before a renewal went through (${hold.trouble})`),
      Math.max(0, at - this.clock.now()),
    );
    hold.deadline.unref();
  }

  private async renew(hold: Hold): Promise<void> {
    if (hold.renewing) return;
    const at = this.clock.now();
    let renewed: boolean;
    hold.renewing = true;
    try {
      renewed = await this.ops.renew();
    } catch (err) {
      // The database is away (or locked): the lease holds until its expiry.
      hold.trouble = (err as Error).message;
      if (this.hold !== hold) return;
      this.options.onTrouble?.(err as Error);
      if (this.options.watchExpiry !== false) this.scheduleRenewal(hold);
      return;
    } finally {
      hold.renewing = false;
    }
    if (this.hold !== hold) return; // released or lost meanwhile
    if (!renewed) return this.lose(hold, 'another process took it over');
    this.expireAt(hold, at + this.options.ttlMs);
    if (this.options.watchExpiry !== false) this.scheduleRenewal(hold);
  }

  private lose(hold: Hold, why: string): void {
    if (this.hold !== hold) return;
    this.stop(hold);
    hold.controller.abort(new Error(`${this.options.name} was lost: ${why}.`));
  }

  private stop(hold: Hold): void {
    this.clock.clearTimeout(hold.renewal);
    this.clock.clearTimeout(hold.deadline);
    this.hold = undefined;
  }
}
