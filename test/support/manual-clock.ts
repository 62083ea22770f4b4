import type { Clock, TimerHandle } from '../../src/util/clock.js';
import { withDeadline } from './wait.js';

interface Timer {
  handle: TimerHandle;
  at: number;
  ms: number;
  callback: () => void;
}

/**
 * A Clock that moves only when a test says so: timeouts, backoff and grace periods fire on
 * `advance`, so a test triggers them at the moment it chooses instead of racing real time.
 * `nextTimer` waits (on real events) until the code under test has set the timer it expects.
 */
export class ManualClock implements Clock {
  #now: number;
  #timers: Timer[] = [];
  #waiters: { match: (ms: number) => boolean; resolve: () => void }[] = [];

  constructor(start = Date.UTC(2025, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const handle: TimerHandle = { unref: () => handle };
    const delay = Math.max(0, ms);
    this.#timers.push({ handle, at: this.#now + delay, ms: delay, callback });
    for (const w of this.#waiters.filter((w) => w.match(delay))) {
      this.#waiters.splice(this.#waiters.indexOf(w), 1);
      w.resolve();
    }
    return handle;
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    this.#timers = this.#timers.filter((t) => t.handle !== handle);
  }

  /** The delays of the timers still pending, in the order they were set. */
  get pending(): number[] {
    return this.#timers.map((t) => t.ms);
  }

  /** Moves time on by `ms`, firing every timer that falls due on the way, in time order. */
  advance(ms: number): void {
    const until = this.#now + ms;
    for (;;) {
      const due = this.#timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.#timers.splice(this.#timers.indexOf(due), 1);
      this.#now = Math.max(this.#now, due.at);
      due.callback();
    }
    this.#now = until;
  }

  /**
   * Resolves once a timer of exactly `ms` is pending (any timer when `ms` is omitted), whether it
   * is set already or later.
   */
  nextTimer(ms?: number): Promise<void> {
    const match = (delay: number) => ms === undefined || delay === ms;
    if (this.#timers.some((t) => match(t.ms))) return Promise.resolve();
    const set = new Promise<void>((resolve) => this.#waiters.push({ match, resolve }));
    return withDeadline(
      set,
      () => `a ${ms ?? 'any'} ms timer (pending: ${this.pending.join(', ') || 'none'})`,
    );
  }

  /** Waits for a timer of `ms`, then lets it fire. */
  async elapse(ms: number): Promise<void> {
    await this.nextTimer(ms);
    this.advance(ms);
  }
}
