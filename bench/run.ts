/**
 * `npm run bench`: Hearth's own costs, each against a baseline measured in the same run where one
 * exists. The scripted LLM server answers at once, so the time measured is Hearth's. Prints a
 * table and writes bench/results/latest.json. See bench/README.md for how to read the figures.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataViewFigures } from './figures/data-view.js';
import { editFigures } from './figures/edit.js';
import { permissionFigures } from './figures/permissions.js';
import { prefixFigures } from './figures/prefix.js';
import { promptFigures } from './figures/prompt.js';
import { searchFigures } from './figures/search.js';
import { startupFigures } from './figures/startup.js';
import { stepFigures } from './figures/steps.js';
import { worstCaseFigures } from './figures/worst-case.js';
import type { Row } from './stats.js';

type Figures = { rows: Row[]; json: Record<string, unknown> };

async function main(): Promise<void> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'hearth-bench-')));
  const started = Date.now();
  const sections: Array<[string, () => Figures | Promise<Figures>]> = [
    ['startup', () => startupFigures()],
    ['steps', () => stepFigures(dir)],
    ['prompt', () => promptFigures()],
    ['prefix', () => prefixFigures(dir)],
    ['search', () => searchFigures()],
    ['edit', () => editFigures()],
    ['worst case', () => worstCaseFigures()],
    ['permissions', () => permissionFigures()],
    ['data_view', () => dataViewFigures()],
  ];
  const rows: Row[] = [];
  const json: Record<string, unknown> = {};
  try {
    for (const [name, figures] of sections) {
      process.stderr.write(`bench: ${name}...\n`);
      const result = await figures();
      rows.push(...result.rows);
      Object.assign(json, result.json);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  printTable(rows);
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    seconds: Math.round((Date.now() - started) / 1000),
    rows,
    figures: json,
  };
  await mkdir('bench/results', { recursive: true });
  await writeFile('bench/results/latest.json', `${JSON.stringify(results, null, 2)}\n`);
  process.stderr.write(`bench: done in ${results.seconds}s; wrote bench/results/latest.json\n`);
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
