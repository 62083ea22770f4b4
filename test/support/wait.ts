/**
 * Waiting on events in tests. The deadline is a safety net that turns a hang into a clear message,
 * never a measure of speed: it sits under vitest's test timeout (vitest.config.ts; longer for CLI
 * tests, see cli-harness.ts), so a slow, loaded machine only makes a test slower, not red.
 */
export const EVENT_WAIT_MS = 15_000;

/**
 * Rejects, naming `what`, when `promise` has not settled within the deadline. A function is called
 * then, so the message can show the state at the end (a screen, a count).
 */
export function withDeadline<T>(
  promise: Promise<T>,
  what: string | (() => string),
  ms = EVENT_WAIT_MS,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const described = typeof what === 'string' ? what : what();
      reject(new Error(`Gave up after ${ms} ms waiting for ${described}`));
    }, ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/**
 * Polls `check` until it returns true: for conditions with no event to listen to (a file appearing,
 * a process dying). `what` names the condition in the failure message.
 */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  what: string | (() => string),
  ms = EVENT_WAIT_MS,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`Gave up after ${ms} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
