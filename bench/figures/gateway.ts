import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket } from 'ws';
import type { Goal, Row } from '../stats.js';

/** The loads measured; HEARTH_BENCH_GATEWAY_LOADS=50 (comma-separated) measures fewer, to profile one. */
const LOADS = (process.env.HEARTH_BENCH_GATEWAY_LOADS ?? '1,10,50,200').split(',').map(Number);
/** The load the goals are set at. */
const GOAL_SESSIONS = 50;
/**
 * Rounds at each load, each a direct read then a gateway run, taking turns so a machine whose load
 * drifts moves both alike; the figures are medians over the rounds. Fewer at 200 sessions, the
 * longest run.
 */
const ROUNDS = (sessions: number) =>
  Number(process.env.HEARTH_BENCH_GATEWAY_ROUNDS ?? (sessions >= 200 ? 1 : 3));
const TURNS = 6;
const CHUNKS = 40;
const TOKEN = 'bench-token-0123456789abcdef';

/** A high-resolution wall clock (ms since the epoch), so a stamp means the same in every process. */
const wallNow = () => performance.timeOrigin + performance.now();

/**
 * An instant OpenAI-compatible model server whose every streamed chunk is the time it was
 * written, `<1712345678901.234>`: the client that receives it knows how long it took to arrive.
 * (The scripted test server sends prepared text, which cannot carry its own send time.)
 */
async function startStampServer(): Promise<{ baseUrl: string; server: Server }> {
  const write = (res: ServerResponse, text: string) =>
    new Promise<void>((done) => res.write(text, () => done()));
  const chunk = (delta: object, extra: object = {}) =>
    `data: ${JSON.stringify({ id: 'b', object: 'chat.completion.chunk', model: 'bench', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
  const server = createServer(async (req, res) => {
    for await (const _ of req);
    if (req.url?.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ object: 'list', data: [{ id: 'bench', object: 'model' }] }));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < CHUNKS; i++) await write(res, chunk({ content: `<${wallNow().toFixed(3)}>` }));
    await write(
      res,
      `data: ${JSON.stringify({ id: 'b', object: 'chat.completion.chunk', model: 'bench', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 50, completion_tokens: CHUNKS, total_tokens: 50 + CHUNKS } })}\n\n`,
    );
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}

/**
 * What one load measured. `first`: per turn, how late its first chunk arrived (from the model
 * server writing it to the client reading it). `late`: the same for every chunk. `chunksPerSecond`:
 * every chunk of every turn of every session over the wall time from the first request to the
 * last chunk, the same work either way.
 */
interface Run {
  first: number[];
  late: number[];
  chunks: number;
  chunksPerSecond: number;
}

/** Reads the stamps in `text` into `run`, the first of a turn into `first` too. */
class Stamps {
  readonly first: number[] = [];
  readonly late: number[] = [];
  private started = performance.now();
  private ended = this.started;

  read(text: string, firstOfTurn: boolean): boolean {
    const now = wallNow();
    let first = firstOfTurn;
    for (const match of text.matchAll(/<(\d+\.\d+)>/g)) {
      const ms = now - Number(match[1]);
      this.late.push(ms);
      if (first) this.first.push(ms);
      first = false;
    }
    this.ended = performance.now();
    return first;
  }

  run(): Run {
    const seconds = (this.ended - this.started) / 1000;
    return {
      first: this.first,
      late: this.late,
      chunks: this.late.length,
      chunksPerSecond: this.late.length / seconds,
    };
  }
}

/** Baseline: the same streams read directly, with no Hearth in between, `sessions` at once. */
async function direct(baseUrl: string, sessions: number): Promise<Run> {
  const stamps = new Stamps();
  const one = async () => {
    for (let turn = 0; turn < TURNS; turn++) {
      const response = await fetch(`${baseUrl}/chat/completions`, {
        method: 'POST',
        body: '{"stream":true}',
      });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let firstOfTurn = true;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        firstOfTurn = stamps.read(value, firstOfTurn);
      }
    }
  };
  await Promise.all(Array.from({ length: sessions }, one));
  return stamps.run();
}

/** `sessions` WebSocket clients, each running its turns one after another, all at once; then closed. */
async function throughGateway(url: string, sessions: number): Promise<Run & { frames: number }> {
  const stamps = new Stamps();
  let frames = 0;
  const session = (index: number) =>
    new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws/bench-${index}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      let left = TURNS;
      let firstOfTurn = true;
      const next = () => {
        firstOfTurn = true;
        ws.send(JSON.stringify({ type: 'message', content: `turn ${TURNS - left}` }));
      };
      ws.on('open', next);
      ws.on('message', (data) => {
        const event = JSON.parse(String(data)) as { type: string; text?: string; reason?: string };
        if (event.type === 'text') {
          frames++;
          firstOfTurn = stamps.read(event.text ?? '', firstOfTurn);
        } else if (event.type === 'error') reject(new Error(`session ${index}: ${String(data)}`));
        else if (event.type === 'done') {
          if (event.reason !== 'completed') return reject(new Error(`session ${index}: ${String(data)}`));
          if (--left > 0) return next();
          ws.once('close', () => resolve());
          ws.close();
        }
      });
      ws.on('error', reject);
    });
  await Promise.all(Array.from({ length: sessions }, (_, i) => session(i)));
  return { ...stamps.run(), frames };
}

/** The process's user + system CPU time so far, in ms (/proc/PID/stat, in clock ticks of 10 ms). */
async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function memory(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** RSS once it stops falling (the sessions let go, the heap collected), at most a few seconds on. */
async function settled(pid: number): Promise<number> {
  let last = (await memory(pid)).rss;
  for (let i = 0; i < 20; i++) {
    await sleep(250);
    const now = (await memory(pid)).rss;
    if (now >= last - 0.5 && i >= 3) return now;
    last = Math.min(last, now);
  }
  return last;
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * `hearth serve` on a fresh home. With HEARTH_BENCH_PROF=<dir> the run at the goals' load writes a
 * CPU profile there (`--cpu-prof`), to see where the gateway's time goes.
 */
async function startServe(
  dir: string,
  baseUrl: string,
  profile: string | undefined,
): Promise<{ url: string; child: ChildProcess }> {
  // Side by side: Hearth refuses a home inside the workspace.
  const home = join(dir, 'home');
  const workspace = join(dir, 'work');
  await mkdir(workspace, { recursive: true });
  const prof = profile ? ['--cpu-prof', '--cpu-prof-dir', profile] : [];
  const child = spawn(
    process.execPath,
    [...prof, 'dist/cli/main.js', 'serve', '--port', '0', '-C', workspace],
    {
      env: {
        PATH: process.env.PATH,
        HOME: home,
        HEARTH_HOME: join(home, '.hearth'),
        HEARTH_BASE_URL: baseUrl,
        HEARTH_MODEL: 'bench',
        HEARTH_GATEWAY_TOKEN: TOKEN,
        HEARTH_SANDBOX: 'none',
        HEARTH_CONTEXT_WINDOW: '100000000',
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const found = /listening on (http:\/\/[\d.:]+)/.exec(out);
      if (found) resolve(found[1]!);
    });
    child.on('exit', (code) => reject(new Error(`hearth serve exited with ${code}`)));
  });
  return { url, child };
}

/** Stops the server; SIGTERM lets a profiled one write its profile. */
async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000)]);
  child.kill('SIGKILL');
}

interface Load {
  sessions: number;
  rounds: number;
  direct: Run;
  gateway: Run & { frames: number };
  rss: { idle: number; loaded: number; peak: number; closed: number };
  /** The gateway process's CPU over the gateway runs: ms per turn, and the share of one core. */
  cpu: { perTurn: number; busy: number };
  /** The load average (1 minute) before and after. */
  load: [number, number];
}

/** The median of each figure over the rounds: the samples of the median round by throughput. */
function medianRound<T extends Run>(runs: T[]): T {
  const sorted = [...runs].sort((a, b) => a.chunksPerSecond - b.chunksPerSecond);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function measure(dir: string, baseUrl: string, sessions: number): Promise<Load> {
  const profile = sessions === GOAL_SESSIONS ? process.env.HEARTH_BENCH_PROF : undefined;
  const before = loadavg()[0]!;
  const directs: Run[] = [];
  const gateways: Array<Run & { frames: number }> = [];
  const rss: Load['rss'][] = [];
  let cpu = 0;
  let wall = 0;
  const rounds = ROUNDS(sessions);
  for (let round = 0; round < rounds; round++) {
    // The baseline first, then Hearth, in the same round against the same server.
    directs.push(await direct(baseUrl, sessions));
    const { url, child } = await startServe(
      join(dir, `gateway-${sessions}-${round}`),
      baseUrl,
      round === 0 ? profile : undefined,
    );
    try {
      const idle = (await memory(child.pid!)).rss;
      const cpuBefore = await cpuMs(child.pid!);
      const started = performance.now();
      gateways.push(await throughGateway(url, sessions));
      wall += performance.now() - started;
      cpu += (await cpuMs(child.pid!)) - cpuBefore;
      const loaded = await memory(child.pid!);
      const closed = await settled(child.pid!);
      rss.push({ idle, loaded: loaded.rss, peak: loaded.peak, closed });
    } finally {
      await stop(child);
    }
  }
  const byClosed = [...rss].sort((a, b) => a.closed / a.idle - b.closed / b.idle);
  return {
    sessions,
    rounds,
    direct: medianRound(directs),
    gateway: medianRound(gateways),
    rss: byClosed[Math.floor(byClosed.length / 2)]!,
    cpu: { perTurn: cpu / (rounds * sessions * TURNS), busy: cpu / wall },
    load: [before, loadavg()[0]!],
  };
}

const fmt = (v: number) => `${v.toFixed(1)} ms`;
const times = (v: number) => `${v.toFixed(2)}×`;

function rowsOf(load: Load): Row[] {
  const { sessions, direct: d, gateway: g } = load;
  const at = `${sessions} session${sessions === 1 ? '' : 's'}`;
  const rounds = `median of ${load.rounds} round${load.rounds === 1 ? '' : 's'} taking turns; load average ${load.load[0].toFixed(1)} → ${load.load[1].toFixed(1)}`;
  return [
    {
      figure: `gateway ${at}: first chunk of a turn to client, p50 (${rounds})`,
      value: fmt(percentile(g.first, 50)),
      baseline: `read directly ${fmt(percentile(d.first, 50))}`,
      ratio: times(percentile(g.first, 50) / percentile(d.first, 50)),
    },
    {
      figure: `gateway ${at}: chunk to client, p99`,
      value: fmt(percentile(g.late, 99)),
      baseline: `read directly ${fmt(percentile(d.late, 99))}`,
      ratio: times(percentile(g.late, 99) / percentile(d.late, 99)),
    },
    {
      figure: `gateway ${at}: chunks per second (${TURNS} turns of ${CHUNKS} each; ${(g.chunks / g.frames).toFixed(1)} per frame)`,
      value: g.chunksPerSecond.toFixed(0),
      baseline: `read directly ${d.chunksPerSecond.toFixed(0)}`,
      ratio: times(g.chunksPerSecond / d.chunksPerSecond),
    },
    {
      figure: `gateway ${at}: server RSS loaded (peak) / after closing`,
      value: `${load.rss.loaded.toFixed(0)} (${load.rss.peak.toFixed(0)}) / ${load.rss.closed.toFixed(0)} MiB`,
      baseline: `idle ${load.rss.idle.toFixed(0)} MiB`,
      ratio: times(load.rss.closed / load.rss.idle),
    },
    {
      figure: `gateway ${at}: server CPU per turn (share of one core while serving)`,
      value: `${load.cpu.perTurn.toFixed(1)} ms (${(100 * load.cpu.busy).toFixed(0)}%)`,
    },
  ];
}

/**
 * Where the gateway's busy time went in a CPU profile of the 50-session run (HEARTH_BENCH_PROF;
 * start-up left out; each sample given to the innermost Hearth folder on its stack, SQLite and
 * socket writes to themselves). Measured on 2026-12-07: 7.9 s busy over 300 turns, load average
 * 21 on 2 cores. Profile again after changing the engine.
 */
const PROFILE_SPLIT =
  'model client (src/llm: SSE parsing, text tool-call scan, the request) 24% + its socket writes 4%, SQLite 22% (agent session: messages, status, usage, lease 12%; event log 3%; gateway reads 3.5%), node I/O callbacks 11%, WebSocket frames 7% + ws 3%, agent loop 7%, GC 6%, gateway 5%';

/**
 * Where the time goes: the server's CPU measured here, and the split of a profile of it. A server
 * short of a core's use was not saturated but waiting for a CPU (a loaded machine): each chunk then
 * waits to be scheduled in two processes (the gateway, then the client), where a direct read waits
 * in one.
 */
function why(load: Load): string {
  const cores = cpus().length;
  const used = `the gateway used ${load.cpu.perTurn.toFixed(0)} ms of CPU per turn, ${(100 * load.cpu.busy).toFixed(0)}% of a core`;
  const state =
    load.cpu.busy >= 0.8
      ? "its one event loop is saturated, so a chunk waits behind every other session's turn work"
      : `not saturated: with load average ${load.load[1].toFixed(0)} on ${cores} cores it mostly waited for a CPU, and every chunk waits for one in two processes (gateway, client) where the direct read waits in one`;
  return `${used}: ${state}; a profile splits its CPU: ${PROFILE_SPLIT}`;
}

function goalsOf(load: Load): Goal[] {
  const { direct: d, gateway: g } = load;
  const goal = (name: string, r: number, limit: number, atMost: boolean, note = why(load)): Goal => {
    const met = atMost ? r <= limit : r >= limit;
    return { goal: name, figure: times(r), met, ...(met ? {} : { note }) };
  };
  const n = load.sessions;
  return [
    goal(
      `gateway ${n} sessions: first chunk ≤ 2× direct`,
      percentile(g.first, 50) / percentile(d.first, 50),
      2,
      true,
    ),
    goal(
      `gateway ${n} sessions: chunk throughput ≥ 0.8× direct`,
      g.chunksPerSecond / d.chunksPerSecond,
      0.8,
      false,
    ),
    goal(
      `gateway ${n} sessions: chunk p99 ≤ 3× direct`,
      percentile(g.late, 99) / percentile(d.late, 99),
      3,
      true,
    ),
    goal(
      `gateway RSS after closing ${n} sessions ≤ 1.1× idle`,
      load.rss.closed / load.rss.idle,
      1.1,
      true,
      'no session is held any more (GET /api/status: held 0; the heap in use after a full collection is back to idle), but V8 keeps the pages it grew into under load: the young generation doubled to 32 MiB and old-space pages stay mapped until a later collection',
    ),
  ];
}

export async function gatewayFigures(
  dir: string,
): Promise<{ rows: Row[]; goals: Goal[]; json: Record<string, unknown> }> {
  const { baseUrl, server } = await startStampServer();
  try {
    const loads: Load[] = [];
    for (const sessions of LOADS) loads.push(await measure(dir, baseUrl, sessions));
    const summary = (run: Run) => ({
      firstP50: percentile(run.first, 50),
      p50: percentile(run.late, 50),
      p99: percentile(run.late, 99),
      chunksPerSecond: run.chunksPerSecond,
    });
    return {
      rows: loads.flatMap(rowsOf),
      goals: goalsOf(loads.find((load) => load.sessions === GOAL_SESSIONS) ?? loads.at(-1)!),
      json: {
        gateway: Object.fromEntries(
          loads.map((load) => [
            load.sessions,
            {
              direct: summary(load.direct),
              gateway: {
                ...summary(load.gateway),
                chunksPerFrame: load.gateway.chunks / load.gateway.frames,
              },
              rssMiB: load.rss,
            },
          ]),
        ),
      },
    };
  } finally {
    server.close();
  }
}
