/**
 * The memory gate over an injected memory port and a manual clock: it waits, looking again on the
 * clock, until enough is available; it ends with an error naming the figures at its timeout; an
 * abort ends it at once.
 */
import { expect, it } from 'vitest';
import { waitForMemory } from '../../src/pipeline/memory-gate.js';
import type { MemoryPort } from '../../src/util/memory.js';
import { ManualClock } from '../support/manual-clock.js';

const GB = 1024 ** 3;

/** Memory that comes back a step at a time, one step per look. */
function freeing(steps: number[]): MemoryPort & { looks: number } {
  const port = {
    looks: 0,
    available: () => steps[Math.min(port.looks++, steps.length - 1)]!,
    total: () => 32 * GB,
  };
  return port;
}

it('waits until the memory is available, looking again once a second', async () => {
  const clock = new ManualClock();
  const memory = freeing([2 * GB, 6 * GB, 12 * GB]);
  const waiting = waitForMemory({ memory, minBytes: 10 * GB, timeoutMs: 60_000, clock });
  await clock.elapse(1000);
  await clock.elapse(1000);
  expect(await waiting).toEqual({ ok: true, waitedMs: 2000 });
  expect(memory.looks).toBe(3);
});

it('passes at once when the memory is there', async () => {
  const clock = new ManualClock();
  const memory = freeing([20 * GB]);
  expect(await waitForMemory({ memory, minBytes: 10 * GB, timeoutMs: 1000, clock })).toEqual({
    ok: true,
    waitedMs: 0,
  });
  expect(clock.pending).toEqual([]);
});

it('ends with an error naming the figures when the memory does not come back in time', async () => {
  const clock = new ManualClock();
  const memory = freeing([3 * GB]);
  const waiting = waitForMemory({ memory, minBytes: 10 * GB, timeoutMs: 2500, pollMs: 1000, clock });
  for (const step of [1000, 1000, 500]) await clock.elapse(step);
  expect(await waiting).toEqual({
    ok: false,
    error:
      'memory did not free up: 3.0 GB available after 3 s, 10.0 GB wanted before the next model loads (pipeline.swap.min_free_gb, pipeline.swap.memory_timeout)',
  });
});

it('stops waiting when aborted', async () => {
  const clock = new ManualClock();
  const stop = new AbortController();
  const waiting = waitForMemory({
    memory: freeing([GB]),
    minBytes: 10 * GB,
    timeoutMs: 60_000,
    clock,
    signal: stop.signal,
  });
  await clock.nextTimer(1000);
  stop.abort();
  expect(await waiting).toEqual({ ok: false, error: 'aborted' });
});
