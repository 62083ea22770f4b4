/**
 * The bench's history: every run appends its results to bench/results/history.jsonl (not
 * committed: figures belong to the machine they were measured on), and `--compare` sets this run
 * beside the one before, so that a change that slows something down shows.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import type { Goal, Row } from './stats.js';

const DIR = 'bench/results';
const HISTORY = `${DIR}/history.jsonl`;

export interface BenchResults {
  date: string;
  commit?: string;
  node: string;
  cpus: number;
  seconds: number;
  rows: Row[];
  goals: Goal[];
  figures: Record<string, unknown>;
}

/** The latest run kept, if any. */
export async function lastRun(): Promise<BenchResults | undefined> {
  let text: string;
  try {
    text = await readFile(HISTORY, 'utf8');
  } catch {
    return undefined;
  }
  const last = text.trimEnd().split('\n').at(-1);
  return last ? (JSON.parse(last) as BenchResults) : undefined;
}

export async function keep(results: BenchResults): Promise<void> {
  await mkdir(DIR, { recursive: true });
  await appendFile(HISTORY, `${JSON.stringify(results)}\n`);
}

/** Every timed figure (a spread's median, in ms or MiB), by its path in `figures`. */
function medians(figures: Record<string, unknown>, prefix = ''): Map<string, number> {
  const out = new Map<string, number>();
  for (const [key, value] of Object.entries(figures)) {
    if (typeof value !== 'object' || value === null) continue;
    const path = prefix ? `${prefix} / ${key}` : key;
    const median = (value as { median?: unknown }).median;
    if (typeof median === 'number') out.set(path, median);
    else for (const [k, v] of medians(value as Record<string, unknown>, path)) out.set(k, v);
  }
  return out;
}

/** Lines setting `now` beside `before`: each figure that moved by more than `noise`, and goals that changed. */
export function compare(before: BenchResults, now: BenchResults, noise = 0.1): string[] {
  const lines = [`compared with the run of ${before.date}${before.commit ? ` (${before.commit})` : ''}:`];
  const old = medians(before.figures);
  let steady = 0;
  for (const [path, value] of medians(now.figures)) {
    const was = old.get(path);
    if (was === undefined || was === 0) continue;
    const change = value / was - 1;
    if (Math.abs(change) <= noise) {
      steady++;
      continue;
    }
    const word = change > 0 ? 'SLOWER' : 'faster';
    lines.push(
      `  ${word.padEnd(6)} ${path}: ${fmt(was)} → ${fmt(value)} (${change > 0 ? '+' : ''}${(change * 100).toFixed(0)}%)`,
    );
  }
  lines.push(`  ${steady} other figure(s) within ±${(noise * 100).toFixed(0)}%`);
  const met = new Map(before.goals.map((g) => [g.goal, g.met]));
  for (const goal of now.goals) {
    const was = met.get(goal.goal);
    if (was !== undefined && was !== goal.met) {
      lines.push(`  goal ${goal.met ? 'now met' : 'NO LONGER MET'}: ${goal.goal} (${goal.figure})`);
    }
  }
  return lines;
}

const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(2));
