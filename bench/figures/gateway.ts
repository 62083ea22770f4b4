import { spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { type Row, type Spread, spread } from '../stats.js';

const SESSIONS = 50;
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

/** Milliseconds from each stamp in `text` to now. */
function lateness(text: string, into: number[]): void {
  const now = wallNow();
  for (const match of text.matchAll(/<(\d+\.\d+)>/g)) into.push(now - Number(match[1]));
}

/** Baseline: the same streams read directly, with no Hearth in between. */
async function direct(baseUrl: string): Promise<number[]> {
  const latencies: number[] = [];
  const one = async () => {
    for (let turn = 0; turn < TURNS; turn++) {
      const response = await fetch(`${baseUrl}/chat/completions`, {
        method: 'POST',
        body: '{"stream":true}',
      });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        lateness(value, latencies);
      }
    }
  };
  await Promise.all(Array.from({ length: SESSIONS }, one));
  return latencies;
}

async function memory(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** 50 sessions over WebSockets, each running its turns one after another, all at once. */
async function throughGateway(url: string): Promise<{ latencies: number[]; seconds: number; turns: number }> {
  const latencies: number[] = [];
  let turns = 0;
  const started = performance.now();
  const session = (index: number) =>
    new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws/bench-${index}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      let left = TURNS;
      const next = () => ws.send(JSON.stringify({ type: 'message', content: `turn ${TURNS - left}` }));
      ws.on('open', next);
      ws.on('message', (data) => {
        const event = JSON.parse(String(data)) as { type: string; text?: string; reason?: string };
        if (event.type === 'text') lateness(event.text ?? '', latencies);
        else if (event.type === 'error') reject(new Error(`session ${index}: ${String(data)}`));
        else if (event.type === 'done') {
          if (event.reason !== 'completed') return reject(new Error(`session ${index}: ${String(data)}`));
          turns++;
          if (--left === 0) {
            ws.close();
            resolve();
          } else next();
        }
      });
      ws.on('error', reject);
    });
  await Promise.all(Array.from({ length: SESSIONS }, (_, i) => session(i)));
  return { latencies, seconds: (performance.now() - started) / 1000, turns };
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function gatewayFigures(dir: string): Promise<{ rows: Row[]; json: Record<string, unknown> }> {
  const { baseUrl, server } = await startStampServer();
  // Side by side: Hearth refuses a home inside the workspace.
  const home = join(dir, 'gateway-home');
  const workspace = join(dir, 'gateway-work');
  await mkdir(workspace, { recursive: true });
  const child = spawn(process.execPath, ['dist/cli/main.js', 'serve', '--port', '0', '-C', workspace], {
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
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const found = /listening on (http:\/\/[\d.:]+)/.exec(out);
        if (found) resolve(found[1]!);
      });
      child.on('exit', (code) => reject(new Error(`hearth serve exited with ${code}`)));
    });
    const idle = await memory(child.pid!);
    const baseline = await direct(baseUrl);
    const run = await throughGateway(url);
    const loaded = await memory(child.pid!);
    const p = (samples: number[], q: number) => percentile(samples, q);
    const fmt = (v: number) => `${v.toFixed(2)} ms`;
    const ratioOf = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
    const chunks: Spread = spread(run.latencies);
    return {
      rows: [
        {
          figure: `gateway: LLM chunk to WebSocket client, p50 (${SESSIONS} sessions at once)`,
          value: fmt(p(run.latencies, 50)),
          baseline: `read directly ${fmt(p(baseline, 50))}`,
          ratio: ratioOf(p(run.latencies, 50), p(baseline, 50)),
        },
        {
          figure: 'gateway: LLM chunk to WebSocket client, p99',
          value: fmt(p(run.latencies, 99)),
          baseline: `read directly ${fmt(p(baseline, 99))}`,
          ratio: ratioOf(p(run.latencies, 99), p(baseline, 99)),
        },
        {
          figure: `gateway: turns per second (${SESSIONS} sessions × ${TURNS} turns of ${CHUNKS} chunks)`,
          value: (run.turns / run.seconds).toFixed(1),
        },
        {
          figure: 'gateway: server RSS after the run (peak)',
          value: `${loaded.rss.toFixed(0)} MiB (${loaded.peak.toFixed(0)})`,
          baseline: `idle ${idle.rss.toFixed(0)} MiB`,
          ratio: ratioOf(loaded.rss, idle.rss),
        },
      ],
      json: {
        gateway: {
          sessions: SESSIONS,
          turns: run.turns,
          chunks: run.latencies.length,
          chunkToClientMs: { p50: p(run.latencies, 50), p99: p(run.latencies, 99), spread: chunks },
          directMs: { p50: p(baseline, 50), p99: p(baseline, 99) },
          turnsPerSecond: run.turns / run.seconds,
          rssMiB: { idle: idle.rss, after: loaded.rss, peak: loaded.peak },
        },
      },
    };
  } finally {
    child.kill('SIGKILL');
    server.close();
  }
}
