import type { SlotClaim } from '../store/postgres/slot-claims.js';
import type { RunRow, SchedulerStore } from '../store/scheduler.js';
import type { Clock } from '../util/clock.js';

/**
 * Scheduled runs that go here, when schedulers on several machines share a database (config
 * `storage`): each machine decides the same slots in its own database, so before a slot runs here
 * its scheduler claims it in the shared one (src/store/postgres/slot-claims.ts). The first claim
 * runs it; the others record the slot as skipped, naming the host that has it. Without a shared
 * database one scheduler holds the lease of its database and no claim is needed.
 *
 * A slot whose claim the shared database did not answer waits for the next pass: running it
 * might run it twice.
 */
export interface SlotClaims {
  claim(jobId: string, slotAt: number): Promise<SlotClaim>;
  close(): Promise<void>;
}

export interface SharedSlotsOptions {
  store: SchedulerStore;
  /** Opens the claims on first need; undefined when no shared database is configured. */
  openClaims?: () => Promise<SlotClaims>;
  clock: Clock;
  problem: (message: string) => void;
}

export class SharedSlots {
  private claims: Promise<SlotClaims> | undefined;
  /** Queued runs of this process whose slot it claimed and has not started yet. */
  private readonly won = new Set<number>();

  constructor(private readonly options: SharedSlotsOptions) {}

  /** Whether a queued run may start here: it is not a slot, no claim is needed, or the claim is won. */
  mayStart(run: RunRow): boolean {
    return !this.options.openClaims || run.kind !== 'scheduled' || this.won.has(run.id);
  }

  /** The run started: its claim is spent. */
  started(id: number): void {
    this.won.delete(id);
  }

  /**
   * Claims the slots of these queued runs (this process's, going here). Records the runs whose
   * slot another scheduler has as skipped, and returns them.
   */
  async claim(runs: readonly RunRow[], owner: string): Promise<RunRow[]> {
    const { store, clock, openClaims } = this.options;
    const pending = runs.filter((r) => r.kind === 'scheduled' && r.slotAt !== null && !this.won.has(r.id));
    if (!openClaims || pending.length === 0) return [];
    const skipped: RunRow[] = [];
    try {
      const claims = await this.open(openClaims);
      for (const run of pending) {
        const claim = await claims.claim(run.jobId!, run.slotAt!);
        if (claim.won) this.won.add(run.id);
        else if (store.skipRun(run.id, owner, `run on ${claim.host} by another scheduler`, clock.now()))
          skipped.push(store.get(run.id)!);
      }
    } catch (err) {
      this.options.problem(
        `the shared database did not answer, so slots that run here wait: ${(err as Error).message}`,
      );
    }
    return skipped;
  }

  private open(openClaims: () => Promise<SlotClaims>): Promise<SlotClaims> {
    this.claims ??= openClaims().catch((err: unknown) => {
      this.claims = undefined;
      throw err;
    });
    return this.claims;
  }

  async close(): Promise<void> {
    const claims = await this.claims?.catch(() => undefined);
    this.claims = undefined;
    this.won.clear();
    await claims?.close();
  }
}
