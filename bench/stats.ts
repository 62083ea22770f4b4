/** A figure's summary over repeated runs. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  runs: number;
}

export function spread(samples: number[]): Spread {
  if (samples.length === 0) throw new Error('no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted.at(-1)!, runs: samples.length };
}

/** Runs `fn` `runs` times and returns the wall times in milliseconds. */
export async function timeRuns(runs: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await fn();
    out.push(performance.now() - started);
  }
  return out;
}

/**
 * Runs each measurement `runs` times, taking turns (a b c a b c ...) after one warm-up round, so
 * that a machine whose speed drifts during the run moves every figure alike. Each measurement
 * returns the milliseconds it measured.
 */
export async function takingTurns(runs: number, measures: (() => Promise<number>)[]): Promise<Spread[]> {
  const samples: number[][] = measures.map(() => []);
  for (let round = -1; round < runs; round++) {
    for (const [i, measure] of measures.entries()) {
      const ms = await measure();
      if (round >= 0) samples[i]!.push(ms);
    }
  }
  return samples.map(spread);
}

/** `takingTurns` for functions timed whole. */
export function interleaved(runs: number, fns: (() => Promise<unknown>)[]): Promise<Spread[]> {
  return takingTurns(
    runs,
    fns.map((fn) => async () => {
      const started = performance.now();
      await fn();
      return performance.now() - started;
    }),
  );
}

/** One line of the printed table: a figure, its value, and how it compares with its baseline. */
export interface Row {
  figure: string;
  value: string;
  baseline?: string;
  ratio?: string;
}

export const ms = (s: Spread) => `${s.median.toFixed(1)} ms (${s.min.toFixed(1)}–${s.max.toFixed(1)})`;
export const ratio = (a: Spread, b: Spread) => `${(a.median / b.median).toFixed(2)}×`;

/** One of issue 13's goals, as the bench met it or not: `figure` is what was measured, with its unit. */
export interface Goal {
  goal: string;
  figure: string;
  met: boolean;
  /** Why a goal is missed, where the bench knows. */
  note?: string;
}

/** What each figures module hands back: table rows, goals, and the numbers kept in the history. */
export interface Figures {
  rows: Row[];
  json: Record<string, unknown>;
  goals?: Goal[];
}

/**
 * A ratio goal: `value` ÷ `base` at most `limit`. Missed, its note says by how much, and `why`
 * (what the bench knows of where the time goes) when given.
 */
export function ratioGoal(goal: string, value: Spread, base: Spread, limit: number, why?: string): Goal {
  const r = value.median / base.median;
  const met = r <= limit;
  const over = `${((r / limit - 1) * 100).toFixed(0)}% over`;
  return { goal, figure: `${r.toFixed(2)}×`, met, ...(met ? {} : { note: why ? `${over}: ${why}` : over }) };
}

/** `ratioGoal` on the best runs (`min`): the cost of the code when the machine lets it run. */
export function bestGoal(goal: string, value: Spread, base: Spread, limit: number, why?: string): Goal {
  return ratioGoal(goal, { ...value, median: value.min }, { ...base, median: base.min }, limit, why);
}
