/**
 * The scheduler's leases on the one lease primitive (store/leases.ts). The scheduler's own lease
 * says which process schedules: every tick takes or renews it (`acquireLease`'s 'acquired',
 * 'renewed' or 'held'), and the primitive renews it between ticks. A run this process has going
 * is leased to it as it is recorded and started; its lease is renewed while it goes, so a long
 * run is not taken for the run of a dead process (and recorded as interrupted) by another scheduler.
 */
import { Lease } from '../store/leases.js';
import type { SchedulerStorage } from '../store/scheduler-storage.js';
import type { Clock } from '../util/clock.js';

export interface LeaseScope {
  store: SchedulerStorage;
  owner: string;
  clock: Clock;
  ttl: number;
}

/** The lease of scheduling, held by one process at a time. */
export function schedulingLease({ store, owner, clock, ttl }: LeaseScope, pid: number): Lease {
  return new Lease(
    {
      acquire: () => store.acquireLease(owner, pid, clock.now(), ttl),
      renew: async () => (await store.acquireLease(owner, pid, clock.now(), ttl)) === 'renewed',
      release: () => store.releaseLease(owner),
    },
    { ttlMs: ttl, clock, name: `The scheduler lease of ${owner}` },
  );
}

/**
 * Keeps the leases of this process's runs while one goes (`release` when it ended). The store
 * renews them all at once, and cannot tell a renewal that found a run taken over: a run's end is
 * recorded only if it still is this owner's.
 */
export function runLease(scope: LeaseScope, runId: number, problem: (message: string) => void): Lease {
  const { store, owner, clock, ttl } = scope;
  const renew = async () => {
    await store.renewRunLeases(owner, clock.now(), ttl);
    return true;
  };
  const lease = new Lease(
    {
      // The run's row was leased as it was started (startRun): taking it is a renewal.
      acquire: async () => {
        await renew();
        return 'renewed';
      },
      renew,
      // Recording the run's end clears its lease.
      release: async () => undefined,
    },
    {
      ttlMs: ttl,
      clock,
      name: `The lease of run ${runId}`,
      watchExpiry: false,
      // The database is away: the lease lapses unless a later renewal gets through.
      onTrouble: (err) => problem(`renewing run leases failed: ${err.message}`),
    },
  );
  lease.adopt();
  return lease;
}
