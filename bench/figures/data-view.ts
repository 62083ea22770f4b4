import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open, rename, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ms, type Row, ratio, spread } from '../stats.js';

const run = promisify(execFile);
const FILE = join(tmpdir(), 'hearth-bench-1gb.csv');
const SIZE = 1024 ** 3;
const RUNS = 5;

/** Made once and kept between runs: a 1 GB sales table. */
async function ensureCsv(): Promise<void> {
  if (existsSync(FILE) && (await stat(FILE)).size >= SIZE) return;
  const partial = `${FILE}.part`;
  const out = await open(partial, 'w');
  await out.write('id,region,amount,day,note\n');
  let written = 0;
  let id = 0;
  while (written < SIZE) {
    const lines: string[] = [];
    for (let i = 0; i < 20_000; i++, id++) {
      lines.push(
        `${id},${['north', 'south', 'east'][id % 3]},${id % 7 ? (id * 1.5).toFixed(2) : ''},2024-01-${String((id % 28) + 1).padStart(2, '0')},row ${id}`,
      );
    }
    const chunk = `${lines.join('\n')}\n`;
    await out.write(chunk);
    written += Buffer.byteLength(chunk);
  }
  await out.close();
  await rename(partial, FILE);
}

async function child(idle: boolean): Promise<{ ms: number; maxRssKb: number }> {
  const args = ['--import', 'tsx', 'bench/figures/data-view-child.ts', FILE, ...(idle ? ['--idle'] : [])];
  const { stdout } = await run(process.execPath, args);
  return JSON.parse(stdout) as { ms: number; maxRssKb: number };
}

/** data_view on a 1 GB CSV: its time against `wc -l` reading the file once, its peak memory against a process that only loads it. */
export async function dataViewFigures(): Promise<{ rows: Row[]; json: Record<string, unknown> }> {
  await ensureCsv();
  const times: number[] = [];
  const wc: number[] = [];
  const rss: number[] = [];
  const idleRss: number[] = [];
  for (let i = -1; i < RUNS; i++) {
    const viewed = await child(false);
    const idle = await child(true);
    const started = performance.now();
    await run('wc', ['-l', FILE]);
    if (i < 0) continue; // warm-up: the file is in the page cache from here on
    wc.push(performance.now() - started);
    times.push(viewed.ms);
    rss.push(viewed.maxRssKb / 1024);
    idleRss.push(idle.maxRssKb / 1024);
  }
  const t = spread(times);
  const w = spread(wc);
  const r = spread(rss);
  const b = spread(idleRss);
  return {
    rows: [
      { figure: 'data_view, 1 GB CSV', value: ms(t), baseline: `wc -l ${ms(w)}`, ratio: ratio(t, w) },
      {
        figure: 'data_view peak RSS',
        value: `${r.max.toFixed(0)} MB`,
        baseline: `loaded, idle ${b.max.toFixed(0)} MB`,
        ratio: `+${(r.max - b.max).toFixed(0)} MB`,
      },
    ],
    json: { dataView: { ms: t, wcMs: w, peakRssMb: r, idleRssMb: b } },
  };
}
