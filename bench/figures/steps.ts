import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ScriptedTurn } from '../../test/support/scripted-server.js';
import { startMockServer } from '../mock-server.js';
import { type Figures, type Spread, spread } from '../stats.js';

const STEPS = 200;
/** Issue 13: Hearth's own cost per step, without the server's and the tool's time. */
const STEP_BUDGET_MS = 2;

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

/** The process's CPU time so far (user + system), in ms; /proc counts in clock ticks of 10 ms. */
async function cpuMs(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), counted from field 3: utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

interface RunResult {
  /** From one turn_start to the next, as the bench saw them. */
  stepMs: number[];
  /** The same with the server's time for the step's request and the tool's own time taken out. */
  ownMs: number[];
  peakRssBytes?: number;
  /** Hearth's CPU time per step (tool included), from the first turn_start to done. */
  cpuPerStepMs?: number;
}

/**
 * One 200-step session through the built CLI, with a real store and sandbox, timed from its event
 * stream: a step runs from one turn_start to the next. Its own cost is that minus the server's time
 * for the step's request (the mock server reports it) and the tool's time (tool_result's `ms`).
 */
async function oneRun(dir: string, index: number): Promise<RunResult> {
  const server = await startMockServer(dir, script());
  const starts: number[] = [];
  const toolMs: number[] = [];
  let peak: number | undefined;
  let cpuAtFirst: Promise<number | undefined> | undefined;
  let cpuAtDone: number | undefined;
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
      if (line.includes('"type":"turn_start"')) {
        starts.push(performance.now());
        toolMs.push(0);
        cpuAtFirst ??= cpuMs(child.pid!);
      }
      if (line.includes('"type":"tool_result"')) {
        toolMs[toolMs.length - 1]! += (JSON.parse(line) as { ms: number }).ms;
      }
      if (line.includes('"type":"done"')) {
        cpuAtDone = await cpuMs(child.pid!);
        peak = (await peakRss(child.pid!)) ?? peak;
      }
    }
    clearInterval(poll);
    await new Promise((resolve) => (child.exitCode === null ? child.on('exit', resolve) : resolve(null)));
  } finally {
    server.stop();
  }
  const stepMs = starts.slice(1).map((t, i) => t - starts[i]!);
  if (stepMs.length < STEPS) throw new Error(`the run made only ${stepMs.length} steps`);
  // One chat request per turn; any before the first turn (none today) are not the loop's.
  const spans = server.served.slice(-starts.length);
  if (spans.length !== starts.length) throw new Error(`${spans.length} requests for ${starts.length} turns`);
  const ownMs = stepMs.map((step, i) => step - (spans[i]!.end - spans[i]!.start) - toolMs[i]!);
  const cpuFirst = await cpuAtFirst;
  const cpuPerStepMs =
    cpuFirst !== undefined && cpuAtDone !== undefined ? (cpuAtDone - cpuFirst) / stepMs.length : undefined;
  return { stepMs, ownMs, peakRssBytes: peak, cpuPerStepMs };
}

export async function stepFigures(dir: string): Promise<Figures> {
  await writeFile(
    join(dir, 'data.txt'),
    Array.from({ length: 300 }, (_, i) => `line ${i + 1}: ${'lorem ipsum '.repeat(4)}`).join('\n'),
  );
  const runs: RunResult[] = [];
  for (let i = 0; i < 3; i++) runs.push(await oneRun(dir, i));
  const part = (pick: (r: RunResult) => number[], from: number, to: number): Spread =>
    spread(runs.flatMap((r) => pick(r).slice(from, to)));
  const early = part((r) => r.stepMs, 0, 20);
  const late = part((r) => r.stepMs, 179, 200);
  const ownEarly = part((r) => r.ownMs, 0, 20);
  const ownLate = part((r) => r.ownMs, 179, 200);
  const rss = spread(runs.flatMap((r) => (r.peakRssBytes ? [r.peakRssBytes / 1024 / 1024] : [])));
  const cpus = runs.flatMap((r) => (r.cpuPerStepMs === undefined ? [] : [r.cpuPerStepMs]));
  const cpu = cpus.length ? spread(cpus) : undefined;
  // Where a step's own time goes, for a missed goal: Hearth's CPU, or waiting on the machine.
  const why = (own: Spread) =>
    cpu === undefined
      ? undefined
      : cpu.median <= own.median
        ? `Hearth's CPU per step is ${cpu.median.toFixed(2)} ms (tool included); the rest is waiting: the request's bytes through loopback TCP and two processes waking each other on a shared machine`
        : `Hearth's CPU per step is ${cpu.median.toFixed(2)} ms (tool included)`;
  const stepGoal = (goal: string, own: Spread) => {
    const met = own.median <= STEP_BUDGET_MS;
    const over = `${(own.median - STEP_BUDGET_MS).toFixed(2)} ms over`;
    const reason = why(own);
    return { goal, figure: budget(own), met, ...(met ? {} : { note: reason ? `${over}: ${reason}` : over }) };
  };
  const fmt = (s: Spread) => `${s.median.toFixed(2)} ms (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;
  const growth = (a: Spread, b: Spread) => `${(b.median / a.median).toFixed(2)}×`;
  const budget = (s: Spread) => `${s.median.toFixed(2)} ms`;
  return {
    rows: [
      { figure: 'per-step time, steps 1–20', value: fmt(early) },
      {
        figure: 'per-step time, steps 180–200',
        value: fmt(late),
        baseline: 'steps 1–20',
        ratio: growth(early, late),
      },
      {
        figure: "Hearth's own cost per step, steps 1–20",
        value: fmt(ownEarly),
        baseline: `budget ${STEP_BUDGET_MS} ms`,
      },
      {
        figure: "Hearth's own cost per step, steps 180–200",
        value: fmt(ownLate),
        baseline: 'steps 1–20',
        ratio: growth(ownEarly, ownLate),
      },
      ...(cpu
        ? [
            {
              figure: "Hearth's CPU per step (user + system, tool included)",
              value: `${cpu.median.toFixed(2)} ms (${cpu.min.toFixed(2)}–${cpu.max.toFixed(2)})`,
              baseline: `budget ${STEP_BUDGET_MS} ms`,
            },
          ]
        : []),
      {
        figure: 'peak RSS, 200-step session',
        value: `${rss.median.toFixed(0)} MiB (${rss.min.toFixed(0)}–${rss.max.toFixed(0)})`,
      },
    ],
    goals: [
      stepGoal(`own cost per step ≤ ${STEP_BUDGET_MS} ms, steps 1–20`, ownEarly),
      stepGoal(`own cost per step ≤ ${STEP_BUDGET_MS} ms, steps 180–200`, ownLate),
    ],
    json: {
      stepsEarlyMs: early,
      stepsLateMs: late,
      growth: late.median / early.median,
      ownStepEarlyMs: ownEarly,
      ownStepLateMs: ownLate,
      peakRssMiB: rss,
      cpuPerStepMs: cpu,
    },
  };
}
