import type { TaskState } from './types.js';

type Phase = 'code' | 'review';

/**
 * Phase batching: up to `size` coder rounds, then up to `size` reviews, and again, so that with one
 * model in memory at a time the coder's and the reviewer's models swap once per batch instead of
 * once per task. It only orders the claims; which task may be claimed stays the queue's business
 * (prerequisites first), so a phase with nothing claimable gives way to the other at once. Approved
 * tasks are always committed first: that needs no model. Size 1 alternates.
 */
export class PhaseBatch {
  #phase: Phase = 'code';
  #count = 0;

  constructor(readonly size: number) {}

  /** The states to claim from, in order of preference. */
  order(): TaskState[] {
    return this.#phase === 'code' ? ['approved', 'pending', 'coded'] : ['approved', 'coded', 'pending'];
  }

  /** Counts a claimed task (by the state it was claimed into) to its phase; a full batch turns. */
  took(claimed: TaskState): void {
    const phase: Phase | undefined =
      claimed === 'coding' ? 'code' : claimed === 'verifying' ? 'review' : undefined;
    if (!phase) return;
    if (phase !== this.#phase) {
      this.#phase = phase;
      this.#count = 0;
    }
    if (++this.#count >= this.size) {
      this.#phase = phase === 'code' ? 'review' : 'code';
      this.#count = 0;
    }
  }
}
