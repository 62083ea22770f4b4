/**
 * Keeps a worker's leases while it works a workspace on a store with leases (PostgreSQL): the hold
 * on the workspace and the claim on the task in hand, renewed every third of the lease. When a
 * renewal finds them gone (the database was out of reach longer than the lease and another worker
 * took over), the iteration's signal aborts: the step in flight stops without recording anything,
 * and the task is already back in its phase for the new holder. A renewal that fails for want of
 * the database changes nothing; the lease runs on at the server until it lapses.
 */
import type { PlanStore } from './plan-store.js';

export interface LeaseKeeper {
  /**
   * The worker holds the workspace now: its leases are renewed from here on. Returns a signal for
   * this pass of the loop, aborted when the run stops or the leases are lost.
   */
  iteration(): AbortSignal;
  /** The worker let the workspace go (paused) or does not hold it (standing by): nothing to renew. */
  letGo(): void;
  /** The task whose claim is renewed with the workspace, or none between steps. */
  holding(taskId: number | undefined): void;
  stop(): void;
}

export function keepLeases(
  plans: PlanStore,
  leaseMs: number,
  workspace: string,
  owner: string,
  signal: AbortSignal | undefined,
  onLost: () => void,
): LeaseKeeper {
  let current = new AbortController();
  let task: number | undefined;
  let held = false;
  let renewing = false;
  const renew = async () => {
    if (renewing || !held) return;
    renewing = true;
    try {
      const kept = await plans.renew(owner, workspace, task).catch(() => true);
      if (!kept && held) {
        held = false;
        current.abort();
        onLost();
      }
    } finally {
      renewing = false;
    }
  };
  const timer = setInterval(() => void renew(), Math.max(100, leaseMs / 3));
  timer.unref();
  return {
    iteration() {
      held = true;
      current = new AbortController();
      return signal ? AbortSignal.any([signal, current.signal]) : current.signal;
    },
    letGo() {
      held = false;
    },
    holding(id) {
      task = id;
    },
    stop() {
      clearInterval(timer);
      // A renewal still in flight when the run releases the hold would find it gone: not a loss.
      held = false;
    },
  };
}
