import { type Clock, sleep, systemClock } from '../util/clock.js';
import type { MemoryPort } from '../util/memory.js';

export interface MemoryGate {
  memory: MemoryPort;
  /** Available bytes to wait for. */
  minBytes: number;
  timeoutMs: number;
  /** How often to look again (default one second). */
  pollMs?: number;
  clock?: Clock;
  signal?: AbortSignal;
}

export type GateOutcome = { ok: true; waitedMs: number } | { ok: false; error: string };

const GB = 1024 ** 3;

/**
 * Waits until the machine has `minBytes` available again, as after unloading a model the OS may
 * take a while to hand its memory back. Ends with an error naming the figures after `timeoutMs`,
 * never hangs; an abort ends it at once.
 */
export async function waitForMemory(gate: MemoryGate): Promise<GateOutcome> {
  const clock = gate.clock ?? systemClock;
  const start = clock.now();
  for (;;) {
    const available = gate.memory.available();
    if (available >= gate.minBytes) return { ok: true, waitedMs: clock.now() - start };
    const waited = clock.now() - start;
    if (waited >= gate.timeoutMs) {
      return {
        ok: false,
        error: `memory did not free up: ${gb(available)} GB available after ${Math.round(waited / 1000)} s, ${gb(gate.minBytes)} GB wanted before the next model loads (pipeline.swap.min_free_gb, pipeline.swap.memory_timeout)`,
      };
    }
    const pause = Math.min(gate.pollMs ?? 1000, gate.timeoutMs - waited);
    if (!(await sleep(pause, gate.signal, clock))) return { ok: false, error: 'aborted' };
  }
}

function gb(bytes: number): string {
  return (bytes / GB).toFixed(1);
}
