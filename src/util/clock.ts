/**
 * Time as an injected port. Code with timeouts, backoff or grace periods takes a `Clock` (the
 * system clock by default), so tests can fire those timers on events instead of waiting for them.
 */
export interface Clock {
  /** Milliseconds since the epoch, like Date.now(). */
  now(): number;
  /** Like the global setTimeout; the handle only goes back to this clock's clearTimeout. */
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
}

export interface TimerHandle {
  /** Lets the process exit while the timer is pending. */
  unref(): unknown;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
};

/** Resolves after `ms` on the clock, or early (false) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal, clock: Clock = systemClock): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clock.clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
