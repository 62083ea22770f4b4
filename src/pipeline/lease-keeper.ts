/**
 * Keeps a worker's leases while it works a workspace on a store with leases (PostgreSQL), on the
 * one lease primitive (store/leases.ts): the hold on the workspace, taken or kept at every pass of
 * the loop (from a dead holder of this machine at once), and the claim on the task in hand,
 * renewed with it every third of the lease. When a renewal finds them gone, or none goes through
 * before the lease's end (the database was out of reach longer than the lease and another worker
 * may have taken over), the pass's signal aborts: the step in flight stops without recording
 * anything, and the task is already back in its phase for the new holder.
 */
import { Lease } from '../store/leases.js';
import type { PlanStore } from './plan-store.js';

export interface LeaseKeeper {
  /**
   * Takes or keeps the workspace; true when the worker holds it now. `tookOver` is called with
   * the holder replaced when it was a dead worker of this machine.
   */
  hold(tookOver: (from: string) => void): Promise<boolean>;
  /** A signal for this pass of the loop, aborted when the run stops or the leases are lost. */
  iteration(): AbortSignal;
  /** Lets the workspace go (paused, or the run ends). */
  letGo(): Promise<void>;
  /** The task whose claim is renewed with the workspace, or none between steps. */
  holding(taskId: number | undefined): void;
}

export interface KeeperScope {
  plans: PlanStore;
  leaseMs: number;
  workspace: string;
  owner: string;
  /** Whether another holder still runs (`util/process-identity.ts`). */
  alive(owner: string): boolean;
  signal?: AbortSignal;
  onLost(): void;
}

export function keepLeases(scope: KeeperScope): LeaseKeeper {
  const { plans, workspace, owner } = scope;
  let task: number | undefined;
  let tookOver: (from: string) => void = () => undefined;
  const lease = new Lease(
    {
      acquire: async () => {
        if (await plans.hold(workspace, owner)) return 'acquired';
        const from = await plans.takeOver(workspace, owner, scope.alive);
        if (from === undefined) return 'held';
        tookOver(from);
        return 'acquired';
      },
      // A renewal that fails for want of the database changes nothing until the lease's end.
      renew: () => plans.renew(owner, workspace, task),
      release: () => plans.release(workspace, owner),
    },
    { ttlMs: scope.leaseMs, name: `The hold of ${owner} on ${workspace}` },
  );
  let watched: AbortSignal | undefined;
  return {
    async hold(onTakeOver) {
      tookOver = onTakeOver;
      return (await lease.acquire()) !== 'held';
    },
    iteration() {
      const lost = lease.lost;
      if (watched !== lost) {
        watched = lost;
        lost.addEventListener('abort', () => scope.onLost(), { once: true });
      }
      return scope.signal ? AbortSignal.any([scope.signal, lost]) : lost;
    },
    letGo: () => lease.release(),
    holding(id) {
      task = id;
    },
  };
}
