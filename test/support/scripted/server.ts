/**
 * The scripted LLM server: a real HTTP server on 127.0.0.1 that plays scripted turns to chat
 * requests (OpenAI `/v1/chat/completions` and Ollama `/api/chat`), lists models, answers
 * embeddings, and records every request for assertions.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '../../../src/util/clock.js';
import { EVENT_WAIT_MS } from '../wait.js';
import { embeddingsResponse } from './embeddings.js';
import { Gate, type RecordedRequest, Tally } from './recording.js';
import { type Dialect, serveTurn } from './serve-turn.js';
import { alternationAnswer, type ContextLimit, overflowAnswer, promptTokens } from './server-limits.js';
import { type ScriptedTurn, type TurnInput, toTurn } from './turn.js';

const chatDialects: Record<string, Dialect | undefined> = {
  'POST /v1/chat/completions': 'openai',
  'POST /api/chat': 'ollama',
};

export type ExtraRoute = (
  req: IncomingMessage,
  body: unknown,
) => { status?: number; json: unknown } | Promise<{ status?: number; json: unknown }>;

export interface ScriptedServerOptions {
  turns?: TurnInput[];
  models?: string[];
  port?: number;
  /** Keyed by `'METHOD /path'` (no query string); checked before the built-in routes. */
  extraRoutes?: Record<string, ExtraRoute>;
  embeddingDims?: number;
  /** Called for every request after it is recorded, before the response. */
  onRequest?: (req: RecordedRequest) => void;
  /**
   * Called once a chat response is sent, with when the request began to arrive (its headers were
   * read), when its body had all arrived, and when the response ended (epoch milliseconds,
   * sub-millisecond): the bench takes the server's time out.
   */
  onServed?: (req: RecordedRequest, span: ServedSpan) => void;
  /** Times `delayFirstByte` and `delayBetweenChunks`; real time unless a test injects a ManualClock. */
  clock?: Clock;
  /**
   * The server's real context window: a chat request whose prompt (see `promptTokens`) is longer
   * is refused as that server refuses it, and plays no turn.
   */
  contextLimit?: ContextLimit;
  /**
   * Refuse, as vLLM does for a strict chat template (Mistral, Gemma), a chat request whose user and
   * assistant turns do not alternate; it plays no turn.
   */
  strictAlternation?: boolean;
}

/** When one chat request reached the scripted server and when its response ended (epoch ms). */
export interface ServedSpan {
  /** The request's headers were read: the handler began. */
  start: number;
  /** The last byte of its body had arrived. */
  received: number;
  /** The response's last byte was handed to the socket. */
  end: number;
  /** The request body's size in bytes. */
  bytes: number;
}

export interface ScriptedServer {
  baseUrl: string;
  url: string;
  port: number;
  /** Chat requests of both dialects (`POST /v1/chat/completions`, Ollama's `POST /api/chat`), in order. */
  requests: RecordedRequest[];
  allRequests: RecordedRequest[];
  push(...turns: TurnInput[]): void;
  readonly remaining: number;
  readonly played: number;
  /** TCP connections clients opened so far: keep-alive reuses one. */
  readonly connections: number;
  /** Resolves once at least `n` chat requests have arrived (useful with `.hang()`). */
  waitForRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Resolves once the client has given up on `n` chat responses (closed the connection before the end). */
  waitForDisconnects(n: number, timeoutMs?: number): Promise<void>;
  /** Resolves once `n` responses have reached their `holdAfter` point, in all. */
  waitForHolds(n: number, timeoutMs?: number): Promise<void>;
  /** Lets one held response (the one holding now, else the next to hold) go on. */
  release(): void;
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, json: unknown): void {
  const text = JSON.stringify(json);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: { message: `scripted server: ${message}` } });
}

function flattenHeaders(h: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** The body, and when its last byte had arrived (epoch ms). */
async function readBody(req: IncomingMessage): Promise<{ raw: string; received: number }> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const received = performance.timeOrigin + performance.now();
  return { raw: Buffer.concat(parts).toString('utf8'), received };
}

function parseJson(raw: string): unknown {
  try {
    return raw ? JSON.parse(raw) : undefined;
  } catch {
    return undefined;
  }
}

export async function startScriptedServer(opts: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const turns = (opts.turns ?? []).map(toTurn);
  const models = opts.models ?? ['scripted-model'];
  const clock = opts.clock ?? systemClock;
  const requests: RecordedRequest[] = [];
  const allRequests: RecordedRequest[] = [];
  const arrived = new Tally();
  const disconnects = new Tally();
  const holds = new Tally();
  const gate = new Gate();
  const closing = new AbortController();
  let played = 0;

  function serveChat(
    turn: ScriptedTurn,
    dialect: Dialect,
    req: IncomingMessage,
    res: ServerResponse,
    rec: RecordedRequest,
  ) {
    let cut = false;
    res.on('close', () => {
      if (!res.writableFinished && !cut && !closing.signal.aborted) disconnects.bump();
    });
    return serveTurn(turn, {
      req,
      res,
      rec,
      dialect,
      ctx: {
        model: typeof rec.body.model === 'string' ? rec.body.model : models[0]!,
        turnNo: played,
        promptChars: rec.raw.length,
      },
      clock,
      closing: closing.signal,
      hold: (gone) => {
        holds.bump();
        return gate.pass(gone);
      },
      cut: () => {
        cut = true;
      },
    });
  }

  /** What a real server with these limits answers instead of a reply, if anything. */
  function refuse(raw: string, body: unknown, dialect: Dialect) {
    if (opts.strictAlternation) {
      const answer = alternationAnswer(body);
      if (answer) return answer;
    }
    const limit = opts.contextLimit;
    const prompt = promptTokens(raw);
    if (limit && prompt > limit.tokens) return overflowAnswer(limit.server, prompt, limit.tokens, dialect);
    return undefined;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const start = performance.timeOrigin + performance.now();
    const { raw, received } = await readBody(req);
    const method = req.method ?? 'GET';
    const key = `${method} ${new URL(req.url ?? '/', 'http://127.0.0.1').pathname}`;
    const body = parseJson(raw);
    const rec: RecordedRequest = {
      path: req.url ?? '/',
      method,
      headers: flattenHeaders(req.headers),
      body,
      raw,
    };
    allRequests.push(rec);
    const dialect = chatDialects[key];
    const isChat = dialect !== undefined;
    if (isChat) requests.push(rec);
    opts.onRequest?.(rec);
    const { onServed } = opts;
    if (isChat && onServed) {
      res.on('finish', () =>
        onServed(rec, {
          start,
          received,
          end: performance.timeOrigin + performance.now(),
          bytes: Buffer.byteLength(raw),
        }),
      );
    }
    if (isChat) arrived.bump();

    const extra = opts.extraRoutes?.[key];
    if (extra) {
      const out = await extra(req, body);
      return sendJson(res, out.status ?? 200, out.json);
    }
    if (isChat) {
      if (typeof body !== 'object' || body === null) {
        return sendError(res, 400, 'request body is not a JSON object');
      }
      const refusal = refuse(raw, body, dialect);
      if (refusal) return sendJson(res, refusal.status, refusal.json);
      const turn = turns.shift();
      if (!turn) return sendError(res, 500, `no more turns (${played} played)`);
      played++;
      return serveChat(turn, dialect, req, res, rec);
    }
    if (key === 'GET /v1/models') {
      const data = models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'scripted' }));
      return sendJson(res, 200, { object: 'list', data });
    }
    if (key === 'POST /v1/embeddings') {
      const out = embeddingsResponse(body, opts.embeddingDims);
      return out ? sendJson(res, 200, out) : sendError(res, 400, 'embeddings need an input');
    }
    sendError(res, 404, `no route for ${key}`);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      sendError(res, 500, `crashed: ${String(err)}`);
    });
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;

  return {
    url: `http://127.0.0.1:${port}`,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    allRequests,
    push: (...more) => void turns.push(...more.map(toTurn)),
    get remaining() {
      return turns.length;
    },
    get played() {
      return played;
    },
    get connections() {
      return connections;
    },
    async waitForRequests(n, timeoutMs = EVENT_WAIT_MS) {
      await arrived.reach(n, 'chat requests', timeoutMs);
      return requests.slice();
    },
    waitForDisconnects: (n, timeoutMs = EVENT_WAIT_MS) => disconnects.reach(n, 'disconnects', timeoutMs),
    waitForHolds: (n, timeoutMs = EVENT_WAIT_MS) => holds.reach(n, 'held responses', timeoutMs),
    release: () => gate.release(),
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        // Keep-alive and hung sockets would otherwise hold close() open forever.
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
