import { readFileSync } from 'node:fs';

/**
 * Why slots came late, told from how the time between two ticks of the leading scheduler passed.
 * The wall clock (which schedules slots) can run ahead of the time the process saw pass for two
 * reasons: the machine slept (the monotonic clock stops, the time since boot does not) or the
 * clock was set forward (neither moved). Without a tick of its own before, no scheduler was running.
 */
export interface ElapsedSources {
  /** Milliseconds on a clock that never jumps and stops while the machine sleeps. */
  monotonic(): number;
  /** Milliseconds since boot, sleep included; undefined where the system does not say (not Linux). */
  sinceBoot(): number | undefined;
}

export const systemElapsed: ElapsedSources = {
  monotonic: () => performance.now(),
  sinceBoot: () => {
    try {
      return Number.parseFloat(readFileSync('/proc/uptime', 'utf8')) * 1000;
    } catch {
      return undefined;
    }
  },
};

interface Mark {
  wall: number;
  monotonic: number;
  boot: number | undefined;
}

export class TickGap {
  #last: Mark | undefined;

  constructor(
    private readonly sources: ElapsedSources,
    /** Wall time running ahead of the process's own by more than this is a sleep or a jump. */
    private readonly tolerance: number,
  ) {}

  /** A tick as leader at wall time `wall`: why a slot found late now was missed. */
  observe(wall: number): string {
    const now: Mark = { wall, monotonic: this.sources.monotonic(), boot: this.sources.sinceBoot() };
    const last = this.#last;
    this.#last = now;
    if (!last) return 'no scheduler was running';
    const seen = now.monotonic - last.monotonic;
    const unseen = wall - last.wall - seen;
    if (unseen <= this.tolerance) return `the scheduler was held up for ${span(wall - last.wall)}`;
    const asleep =
      now.boot !== undefined && last.boot !== undefined ? now.boot - last.boot - seen : undefined;
    if (asleep !== undefined && asleep > unseen / 2) return `the machine was asleep for ${span(asleep)}`;
    return asleep === undefined
      ? `the clock moved forward by ${span(unseen)} (it was set forward, or the machine slept)`
      : `the clock jumped forward by ${span(unseen)}`;
  }

  /** This process stopped leading: whoever leads next knows nothing of the time in between. */
  forget(): void {
    this.#last = undefined;
  }
}

function span(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return `${Math.round(ms / 1000)} s`;
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} days` : `${days} days ${hours % 24} h`;
}
