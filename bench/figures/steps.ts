import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ScriptedTurn } from '../../test/support/scripted-server.js';
import { startMockServer } from '../mock-server.js';
import { type Figures, type Spread, spread } from '../stats.js';

export const STEPS = 200;
/** Issue 13: Hearth's own cost per step, without the server's and the tool's time. */
const STEP_BUDGET_MS = 2;
/** Sessions measured, taking turns with the bare exchanges; each figure is the median of their steps. */
const RUNS = 5;

/** 200 read-only steps (different arguments each time, so the loop guard stays out of it), then an answer. */
export function stepScript(): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let i = 0; i < STEPS; i++) {
    turns.push({
      toolCalls: [{ name: 'read_file', args: { path: 'data.txt', offset: (i % 250) + 1, limit: 5 } }],
    });
  }
  turns.push({ content: [{ type: 'text', text: 'Read it all.' }] });
  return turns;
}

/**
 * The scripted server is a Node process too, and a fresh one per run: left cold, its reading of
 * the first requests' bodies (counted as Hearth's, see `oneRun`) runs in V8's interpreter and adds
 * to Hearth's early steps what a server written in C++ (llama.cpp, Ollama) never costs. Requests to
 * a path that is not a chat route, with bodies of the sizes a session sends, warm that code first;
 * they play no turn and are not counted among the served chat requests.
 */
export async function warmUp(baseUrl: string): Promise<void> {
  const agent = new Agent({ keepAlive: true });
  try {
    for (let i = 0; i < 200; i++) {
      const body = Buffer.from(JSON.stringify({ messages: 'x'.repeat(i % 2 === 0 ? 4 * 1024 : 128 * 1024) }));
      await new Promise<void>((resolve, reject) => {
        const request = httpRequest(
          `${baseUrl}/warm-up`,
          {
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
          },
          (response) => {
            response.resume();
            response.on('end', resolve);
            response.on('error', reject);
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    }
  } finally {
    agent.destroy();
  }
}

/** The file the session reads, a few lines a step. */
/** The session's workspace: below `dir`, beside the Hearth homes (which may not lie inside it). */
const workspaceOf = (dir: string) => join(dir, 'work');

export async function writeStepData(dir: string): Promise<void> {
  await mkdir(workspaceOf(dir), { recursive: true });
  await writeFile(
    join(workspaceOf(dir), 'data.txt'),
    Array.from({ length: 300 }, (_, i) => `line ${i + 1}: ${'lorem ipsum '.repeat(4)}`).join('\n'),
  );
}

/** The built CLI running the 200-step session in `dir` with a fresh home, its events on stdout. */
export function spawnSession(
  dir: string,
  index: number,
  baseUrl: string,
  nodeFlags: string[] = [],
): ChildProcessByStdio<null, Readable, null> {
  return spawn(
    process.execPath,
    [
      ...nodeFlags,
      'dist/cli/main.js',
      ...['--yolo', '--json', '--max-iterations', String(STEPS + 10), '--base-url', baseUrl],
      ...['-m', 'm', '-C', workspaceOf(dir), 'read data.txt piece by piece'],
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
  /** The server's time for each step's request: last byte of the request in to last byte of the reply out. */
  serverMs: number[];
  /** The size of each step's request body. */
  bodyBytes: number[];
  peakRssBytes?: number;
  /** Hearth's CPU time per step (tool included), from the first turn_start to done. */
  cpuPerStepMs?: number;
}

/**
 * One 200-step session through the built CLI, with a real store and sandbox, timed from its event
 * stream: a step runs from one turn_start to the next. Its own cost is that minus the server's time
 * for the step's request and the tool's time (tool_result's `ms`, to a hundredth of a millisecond).
 * The server's time runs from the last byte of the request body in to the last byte of the reply
 * out (the mock server reports both): parsing the history's JSON and answering are the server's;
 * building the request, writing it and carrying it to the server count as Hearth's, as does the
 * server's reading of the body while it arrives (counted from its headers, the server's time would
 * hide a client that writes its body slowly, as fetch() did).
 */
async function oneRun(dir: string, index: number): Promise<RunResult> {
  const server = await startMockServer(dir, stepScript());
  await warmUp(server.baseUrl);
  const starts: number[] = [];
  const toolMs: number[] = [];
  let peak: number | undefined;
  let cpuAtFirst: Promise<number | undefined> | undefined;
  let cpuAtDone: number | undefined;
  try {
    const child = spawnSession(dir, index, server.baseUrl);
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
  const serverMs = spans.map((span) => span.end - span.received);
  const ownMs = stepMs.map((step, i) => step - serverMs[i]! - toolMs[i]!);
  const cpuFirst = await cpuAtFirst;
  const cpuPerStepMs =
    cpuFirst !== undefined && cpuAtDone !== undefined ? (cpuAtDone - cpuFirst) / stepMs.length : undefined;
  return {
    stepMs,
    ownMs,
    serverMs,
    bodyBytes: spans.slice(0, -1).map((span) => span.bytes),
    peakRssBytes: peak,
    cpuPerStepMs,
  };
}

/**
 * The floor under a step's own cost on this machine: the same exchanges and nothing else. A bare
 * node:http client posts bodies of the sizes Hearth sent, one after another over one kept-alive
 * connection, to a mock server playing the same script, and reads each reply to its end; each is
 * timed as Hearth's steps are (less the server's time). What Hearth's figure has above this is its
 * own work; this much is two processes passing the bytes through loopback TCP and waking each other.
 */
async function bareExchanges(dir: string, sizes: number[]): Promise<number[]> {
  const server = await startMockServer(dir, stepScript());
  await warmUp(server.baseUrl);
  const agent = new Agent({ keepAlive: true });
  const url = `${server.baseUrl}/chat/completions`;
  const shell = '{"model":"m","messages":[{"role":"user","content":""}],"stream":true}';
  const bodies = sizes.map((size) => {
    const pad = 'x'.repeat(Math.max(0, size - shell.length));
    return Buffer.from(shell.replace('"content":""', `"content":"${pad}"`));
  });
  const exchangeMs: number[] = [];
  try {
    for (const body of bodies) {
      const started = performance.now();
      await new Promise<void>((resolve, reject) => {
        const request = httpRequest(
          url,
          {
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
          },
          (response) => {
            response.on('data', () => {});
            response.on('end', resolve);
            response.on('error', reject);
          },
        );
        request.on('error', reject);
        request.end(body);
      });
      exchangeMs.push(performance.now() - started);
    }
    // The server reports each exchange on its stdout, a moment after the client has the reply.
    const deadline = performance.now() + 5000;
    while (server.served.length < bodies.length && performance.now() < deadline) await sleep(5);
  } finally {
    server.stop();
    agent.destroy();
  }
  if (server.served.length < bodies.length) throw new Error('the mock server did not report every exchange');
  return exchangeMs.map((ms, i) => ms - (server.served[i]!.end - server.served[i]!.received));
}

/** Steps 1–10 and 191–200 (0-based, end exclusive), the early and the late part of a session. */
const EARLY: [number, number] = [0, 10];
const LATE: [number, number] = [STEPS - 10, STEPS];

export async function stepFigures(dir: string): Promise<Figures> {
  await writeStepData(dir);
  const runs: RunResult[] = [];
  const bare: number[][] = [];
  // Hearth's runs and the bare exchanges take turns, so a machine whose speed drifts moves both.
  for (let i = 0; i < RUNS; i++) {
    const run = await oneRun(dir, i);
    runs.push(run);
    bare.push(await bareExchanges(dir, run.bodyBytes));
  }
  const part = (pick: (r: RunResult) => number[], [from, to]: [number, number]): Spread =>
    spread(runs.flatMap((r) => pick(r).slice(from, to)));
  const barePart = ([from, to]: [number, number]): Spread => spread(bare.flatMap((b) => b.slice(from, to)));
  const early = part((r) => r.stepMs, EARLY);
  const late = part((r) => r.stepMs, LATE);
  const ownEarly = part((r) => r.ownMs, EARLY);
  const ownLate = part((r) => r.ownMs, LATE);
  const bareEarly = barePart(EARLY);
  const bareLate = barePart(LATE);
  const rss = spread(runs.flatMap((r) => (r.peakRssBytes ? [r.peakRssBytes / 1024 / 1024] : [])));
  const cpus = runs.flatMap((r) => (r.cpuPerStepMs === undefined ? [] : [r.cpuPerStepMs]));
  const cpu = cpus.length ? spread(cpus) : undefined;
  const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
  const bodyEarly = runs[0]!.bodyBytes[EARLY[0]]!;
  const bodyLate = runs[0]!.bodyBytes[LATE[1] - 1]!;
  // Where a missed step's time goes: the bare exchange of the same bytes, and Hearth's work on top.
  const why = (own: Spread, floor: Spread) =>
    (floor.median >= own.median
      ? `the bare exchange of the same bytes alone took ${floor.median.toFixed(2)} ms: the machine was too busy to tell Hearth's work apart`
      : `of it, ${floor.median.toFixed(2)} ms is the bare exchange of the same bytes (a node:http client and nothing else), ` +
        `${(own.median - floor.median).toFixed(2)} ms Hearth's work`) +
    (cpu ? `; Hearth's CPU per step is ${cpu.median.toFixed(2)} ms (tool included)` : '');
  const stepGoal = (goal: string, own: Spread, floor: Spread) => {
    const met = own.median <= STEP_BUDGET_MS;
    const over = `${(own.median - STEP_BUDGET_MS).toFixed(2)} ms over`;
    return { goal, figure: budget(own), met, ...(met ? {} : { note: `${over}: ${why(own, floor)}` }) };
  };
  const fmt = (s: Spread) => `${s.median.toFixed(2)} ms (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;
  const growth = (a: Spread, b: Spread) => `${(b.median / a.median).toFixed(2)}×`;
  const budget = (s: Spread) => `${s.median.toFixed(2)} ms`;
  return {
    rows: [
      { figure: 'per-step time, steps 1–10', value: fmt(early) },
      {
        figure: 'per-step time, steps 191–200',
        value: fmt(late),
        baseline: 'steps 1–10',
        ratio: growth(early, late),
      },
      {
        figure: "Hearth's own cost per step, steps 1–10",
        value: fmt(ownEarly),
        baseline: `budget ${STEP_BUDGET_MS} ms`,
      },
      {
        figure: "Hearth's own cost per step, steps 191–200",
        value: fmt(ownLate),
        baseline: 'steps 1–10',
        ratio: growth(ownEarly, ownLate),
      },
      {
        figure: `bare exchange of the same bytes, steps 1–10 (${kib(bodyEarly)} request)`,
        value: fmt(bareEarly),
        baseline: "Hearth's own cost",
        ratio: `${(bareEarly.median / ownEarly.median).toFixed(2)}×`,
      },
      {
        figure: `bare exchange of the same bytes, steps 191–200 (${kib(bodyLate)} request)`,
        value: fmt(bareLate),
        baseline: "Hearth's own cost",
        ratio: `${(bareLate.median / ownLate.median).toFixed(2)}×`,
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
      stepGoal(`own cost per step ≤ ${STEP_BUDGET_MS} ms, steps 1–10`, ownEarly, bareEarly),
      stepGoal(`own cost per step ≤ ${STEP_BUDGET_MS} ms, steps 191–200`, ownLate, bareLate),
    ],
    json: {
      stepsEarlyMs: early,
      stepsLateMs: late,
      growth: late.median / early.median,
      ownStepEarlyMs: ownEarly,
      ownStepLateMs: ownLate,
      bareExchangeEarlyMs: bareEarly,
      bareExchangeLateMs: bareLate,
      peakRssMiB: rss,
      cpuPerStepMs: cpu,
    },
  };
}
