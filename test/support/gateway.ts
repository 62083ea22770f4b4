import { mkdtemp, realpath, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { type ConfigInput, configSchema } from '../../src/config/schema.js';
import { createServer, type GatewayOptions, type GatewayServer } from '../../src/server/index.js';
import {
  type ScriptedServer,
  type ScriptedServerOptions,
  startScriptedServer,
  type TurnInput,
} from './scripted-server.js';

export const TOKEN = 'test-token-0123456789abcdef';

export interface TestGateway {
  server: GatewayServer;
  llm: ScriptedServer;
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  dir: string;
  workspace: string;
  dbPath: string;
  /** The gateway's Hearth home (cron.json, inbox/, MEMORY.md): inside `dir` unless given, never the user's. */
  home: string;
  /** fetch with the token (unless `headers.authorization` is given) and JSON content type. */
  http(path: string, init?: RequestInit): Promise<Response>;
  /** GET or POST JSON and parse the answer, failing on a non-2xx status. */
  json<T = Record<string, unknown>>(path: string, body?: unknown, method?: string): Promise<T>;
  socket(path: string, headers?: Record<string, string>): Promise<TestSocket>;
  close(): Promise<void>;
}

/**
 * A gateway on 127.0.0.1:0 over real SQLite in a temp folder, talking to the scripted LLM server.
 * `config` is merged over a base with the scripted server, a known token and no sandbox probe.
 */
export async function startGateway(
  turns: TurnInput[] = [],
  options: {
    config?: ConfigInput;
    gateway?: Partial<GatewayOptions>;
    host?: string;
    models?: string[];
    /** The model server's native routes (Ollama's /api/show, LM Studio's model list). */
    routes?: ScriptedServerOptions['extraRoutes'];
  } = {},
): Promise<TestGateway> {
  const llm = await startScriptedServer({ turns, models: options.models, extraRoutes: options.routes });
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'hearth-gw-')));
  const workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-gw-ws-')));
  const dbPath = join(dir, 'hearth.db');
  const config = configSchema.parse({
    base_url: llm.baseUrl,
    model: 'scripted-model',
    context_window: 32_000,
    max_retries: 0,
    sandbox: 'none',
    db_path: dbPath,
    ...options.config,
    gateway: { token: TOKEN, ...options.config?.gateway },
  });
  const home = options.gateway?.home ?? join(dir, 'home');
  const server = createServer({
    config,
    workspace,
    // The user's skills, mcp.json, USER.md, cron.json and inbox: the test's own, never the machine's.
    home,
    stateFile: join(dir, 'gateway.json'),
    ...options.gateway,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const sockets: TestSocket[] = [];
  const http = (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (!headers.has('authorization')) headers.set('authorization', `Bearer ${TOKEN}`);
    if (init.body !== undefined && !headers.has('content-type'))
      headers.set('content-type', 'application/json');
    return fetch(`${url}${path}`, { ...init, headers });
  };
  return {
    server,
    llm,
    url,
    port,
    dir,
    workspace,
    dbPath,
    home,
    http,
    async json<T>(path: string, body?: unknown, method?: string) {
      const response = await http(path, {
        method: method ?? (body === undefined ? 'GET' : 'POST'),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method ?? 'GET/POST'} ${path}: ${response.status} ${text}`);
      return JSON.parse(text) as T;
    },
    async socket(path: string, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) {
      const socket = await openSocket(`ws://127.0.0.1:${port}${path}`, headers);
      sockets.push(socket);
      return socket;
    },
    async close() {
      for (const socket of sockets) socket.ws.terminate();
      await server.shutdown();
      await llm.close();
      await rm(dir, { recursive: true, force: true });
      await rm(workspace, { recursive: true, force: true });
    },
  };
}

export type WireMessage = { type: string; seq?: number } & Record<string, unknown>;

/** A WebSocket client that keeps every message it got and waits on them by content, never by time. */
export interface TestSocket {
  ws: WebSocket;
  messages: WireMessage[];
  send(message: object): void;
  /** Resolves with the first message (from `from` on) that matches; rejects if the socket closes first. */
  next(match: (m: WireMessage) => boolean, from?: number): Promise<WireMessage>;
  closed: Promise<{ code: number; reason: string }>;
}

export function openSocket(url: string, headers: Record<string, string>): Promise<TestSocket> {
  const ws = new WebSocket(url, { headers });
  const messages: WireMessage[] = [];
  const waiters: Array<() => void> = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString() });
      for (const wake of waiters.splice(0)) wake();
    });
  });
  ws.on('message', (data) => {
    messages.push(JSON.parse(String(data)) as WireMessage);
    for (const wake of waiters.splice(0)) wake();
  });
  const socket: TestSocket = {
    ws,
    messages,
    closed,
    send: (message) => ws.send(JSON.stringify(message)),
    next(match, from = 0) {
      return new Promise((resolve, reject) => {
        const look = () => {
          const found = messages.slice(from).find(match);
          if (found) return resolve(found);
          if (ws.readyState === WebSocket.CLOSED) {
            return reject(new Error(`socket closed; got ${JSON.stringify(messages.map((m) => m.type))}`));
          }
          waiters.push(look);
        };
        look();
      });
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(socket));
    ws.once('unexpected-response', (_request, response) => {
      reject(
        Object.assign(new Error(`WebSocket refused: ${response.statusCode}`), {
          status: response.statusCode,
        }),
      );
    });
    ws.once('error', reject);
  });
}

/** Reads a server-sent event stream until `stop` says so; returns the events with their ids. */
export async function readSse(
  response: Response,
  stop: (event: { id?: string; data: WireMessage }) => boolean,
): Promise<Array<{ id?: string; data: WireMessage }>> {
  const events: Array<{ id?: string; data: WireMessage }> = [];
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return events;
    buffer += value;
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf('\n\n');
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      if (!data) continue;
      const id = /^id: (.*)$/m.exec(frame)?.[1];
      const event = { ...(id === undefined ? {} : { id }), data: JSON.parse(data) as WireMessage };
      events.push(event);
      if (stop(event)) {
        await reader.cancel();
        return events;
      }
    }
  }
}
