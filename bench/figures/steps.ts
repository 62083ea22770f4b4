import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ScriptedTurn } from '../../test/support/scripted-server.js';
import { startMockServer } from '../mock-server.js';
import { type Row, type Spread, spread } from '../stats.js';

const STEPS = 200;

/** 200 read-only steps (different arguments each time, so the loop guard stays out of it), then an answer. */
function script(): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let i = 0; i < STEPS; i++) {
    turns.push({
      toolCalls: [{ name: 'read_file', args: { path: 'data.txt', offset: (i % 250) + 1, limit: 5 } }],
    });
  }
  turns.push({ content: [{ type: 'text', text: 'Read it all.' }] });
  return turns;
}

/** VmHWM is the process's peak resident set so far: the last reading before exit is the peak. */
async function peakRss(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

interface RunResult {
  stepMs: number[];
  peakRssBytes?: number;
}

/** One 200-step session through the built CLI, with a real store and sandbox, timed from its event stream. */
async function oneRun(dir: string, index: number): Promise<RunResult> {
  const server = await startMockServer(dir, script());
  const starts: number[] = [];
  let peak: number | undefined;
  try {
    const child = spawn(
      process.execPath,
      [
        'dist/cli/main.js',
        '--yolo',
        '--json',
        '--max-iterations',
        String(STEPS + 10),
        '--base-url',
        server.baseUrl,
        '-m',
        'm',
        '-C',
        dir,
        'read data.txt piece by piece',
      ],
      {
        env: {
          PATH: process.env.PATH,
          HOME: dir,
          HEARTH_HOME: join(dir, `.hearth-${index}`),
          // Large enough that no compaction happens: this measures the loop, not summaries.
          HEARTH_CONTEXT_WINDOW: '100000000',
        },
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    const poll = setInterval(async () => {
      peak = (await peakRss(child.pid!)) ?? peak;
    }, 20);
    for await (const line of createInterface({ input: child.stdout })) {
      if (line.includes('"type":"turn_start"')) starts.push(performance.now());
      if (line.includes('"type":"done"')) peak = (await peakRss(child.pid!)) ?? peak;
    }
    clearInterval(poll);
    await new Promise((resolve) => (child.exitCode === null ? child.on('exit', resolve) : resolve(null)));
  } finally {
    server.stop();
  }
  const stepMs = starts.slice(1).map((t, i) => t - starts[i]!);
  if (stepMs.length < STEPS) throw new Error(`the run made only ${stepMs.length} steps`);
  return { stepMs, peakRssBytes: peak };
}

export async function stepFigures(dir: string): Promise<{ rows: Row[]; json: Record<string, unknown> }> {
  await writeFile(
    join(dir, 'data.txt'),
    Array.from({ length: 300 }, (_, i) => `line ${i + 1}: ${'lorem ipsum '.repeat(4)}`).join('\n'),
  );
  const runs: RunResult[] = [];
  for (let i = 0; i < 3; i++) runs.push(await oneRun(dir, i));
  const early: Spread = spread(runs.flatMap((r) => r.stepMs.slice(0, 20)));
  const late: Spread = spread(runs.flatMap((r) => r.stepMs.slice(179, 200)));
  const rss = spread(runs.flatMap((r) => (r.peakRssBytes ? [r.peakRssBytes / 1024 / 1024] : [])));
  const fmt = (s: Spread) => `${s.median.toFixed(2)} ms (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;
  return {
    rows: [
      { figure: 'per-step overhead, steps 1–20', value: fmt(early) },
      {
        figure: 'per-step overhead, steps 180–200',
        value: fmt(late),
        baseline: 'steps 1–20',
        ratio: `${(late.median / early.median).toFixed(2)}×`,
      },
      {
        figure: 'peak RSS, 200-step session',
        value: `${rss.median.toFixed(0)} MiB (${rss.min.toFixed(0)}–${rss.max.toFixed(0)})`,
      },
    ],
    json: { stepsEarlyMs: early, stepsLateMs: late, growth: late.median / early.median, peakRssMiB: rss },
  };
}
