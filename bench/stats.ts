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

/** One line of the printed table: a figure, its value, and how it compares with its baseline. */
export interface Row {
  figure: string;
  value: string;
  baseline?: string;
  ratio?: string;
}

export const ms = (s: Spread) => `${s.median.toFixed(1)} ms (${s.min.toFixed(1)}–${s.max.toFixed(1)})`;
export const ratio = (a: Spread, b: Spread) => `${(a.median / b.median).toFixed(2)}×`;
