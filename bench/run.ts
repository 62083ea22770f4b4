/**
 * `npm run bench`: Hearth's own costs, each against a baseline measured in the same run where one
 * exists. The scripted LLM server answers at once, so the time measured is Hearth's. Prints a
 * table of figures and one of issue 13's goals, writes bench/results/latest.json and appends to
 * the history. See bench/README.md for how to read the figures.
 *
 *   npm run bench -- [--compare] [--only startup,steps]
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { dataViewFigures } from './figures/data-view.js';
import { diagnosticsFigures } from './figures/diagnostics.js';
import { editFigures } from './figures/edit.js';
import { embeddedFigures } from './figures/embedded.js';
import { gatewayFigures } from './figures/gateway.js';
import { memoryFigures } from './figures/memory.js';
import { permissionFigures } from './figures/permissions.js';
import { prefixFigures } from './figures/prefix.js';
import { promptFigures } from './figures/prompt.js';
import { queueFigures } from './figures/queue.js';
import { searchFigures } from './figures/search.js';
import { startupFigures } from './figures/startup.js';
import { stepFigures } from './figures/steps.js';
import { toolIndexFigures } from './figures/tool-index.js';
import { webFigures } from './figures/web.js';
import { worstCaseFigures } from './figures/worst-case.js';
import { type BenchResults, compare, keep, lastRun } from './history.js';
import type { Figures, Goal, Row } from './stats.js';

async function main(): Promise<void> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'hearth-bench-')));
  const started = Date.now();
  const sections: Array<[string, () => Figures | Promise<Figures>]> = [
    ['startup', () => startupFigures()],
    ['steps', () => stepFigures(dir)],
    ['prompt', () => promptFigures()],
    ['tool index', () => toolIndexFigures()],
    ['prefix', () => prefixFigures(dir)],
    ['search', () => searchFigures()],
    ['edit', () => editFigures()],
    ['worst case', () => worstCaseFigures()],
    ['permissions', () => permissionFigures()],
    ['data_view', () => dataViewFigures()],
    ['memory', () => memoryFigures()],
    ['gateway', () => gatewayFigures(dir)],
    ['web', () => webFigures()],
    ['queue', () => queueFigures()],
    ['embedded', () => embeddedFigures(dir)],
    ['diagnostics', () => diagnosticsFigures()],
  ];
  const { values } = parseArgs({ options: { compare: { type: 'boolean' }, only: { type: 'string' } } });
  const only = values.only?.split(',').map((s) => s.trim());
  const rows: Row[] = [];
  const goals: Goal[] = [];
  const json: Record<string, unknown> = {};
  try {
    for (const [name, figures] of sections) {
      if (only && !only.includes(name)) continue;
      process.stderr.write(`bench: ${name}...\n`);
      const result = await figures();
      rows.push(...result.rows);
      goals.push(...(result.goals ?? []));
      Object.assign(json, result.json);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  printTable(rows);
  printGoals(goals);
  const results: BenchResults = {
    date: new Date().toISOString(),
    commit: currentCommit(),
    node: process.version,
    cpus: cpus().length,
    seconds: Math.round((Date.now() - started) / 1000),
    rows,
    goals,
    figures: json,
  };
  const before = await lastRun();
  if (values.compare) {
    const lines = before ? compare(before, results) : ['no earlier run kept to compare with'];
    process.stdout.write(`\n${lines.join('\n')}\n`);
  }
  await mkdir('bench/results', { recursive: true });
  await writeFile('bench/results/latest.json', `${JSON.stringify(results, null, 2)}\n`);
  await keep(results);
  process.stderr.write(
    `bench: done in ${results.seconds}s; wrote bench/results/latest.json and added it to history.jsonl\n`,
  );
}

function currentCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/** Issue 13's goals: each with what was measured and whether it is met. */
function printGoals(goals: Goal[]): void {
  if (goals.length === 0) return;
  const w = Math.max(...goals.map((g) => g.goal.length), 'goal'.length);
  const f = Math.max(...goals.map((g) => g.figure.length), 'figure'.length);
  process.stdout.write(`\n${'goal'.padEnd(w)}  ${'figure'.padEnd(f)}  met\n`);
  for (const g of goals) {
    const met = g.met ? 'met' : `NOT MET${g.note ? ` (${g.note})` : ''}`;
    process.stdout.write(`${g.goal.padEnd(w)}  ${g.figure.padEnd(f)}  ${met}\n`);
  }
}

function printTable(rows: Row[]): void {
  const head: Row = {
    figure: 'figure',
    value: 'value (median, min–max)',
    baseline: 'baseline',
    ratio: 'ratio',
  };
  const all = [head, ...rows];
  const width = (key: keyof Row) => Math.max(...all.map((r) => (r[key] ?? '').length));
  const w = { figure: width('figure'), value: width('value'), baseline: width('baseline') };
  for (const r of all) {
    process.stdout.write(
      `${r.figure.padEnd(w.figure)}  ${r.value.padEnd(w.value)}  ${(r.baseline ?? '').padEnd(w.baseline)}  ${r.ratio ?? ''}\n`,
    );
  }
}

await main();
