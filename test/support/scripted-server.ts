import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * One ordered piece of assistant content; `think` is wrapped in `<think>...</think>` inside content
 * (on Ollama's `/api/chat` it goes to `message.thinking` instead).
 */
export interface ContentPart {
  type: 'text' | 'think';
  text: string;
}

export interface ScriptedToolCall {
  name: string;
  /** A string is sent verbatim, so tests can script malformed arguments. */
  args: string | object;
  /** `undefined` gets a generated id; `null` omits the id (servers without ids). */
  id?: string | null;
  /** Deliver `function.arguments` as a JSON object in one chunk (a quirk of some servers). */
  argsAsObject?: boolean;
}

/**
 * One scripted response, as plain JSON-serializable data (the shape JSON script files use).
 * Fault fields combine: delayFirstByte applies before httpError/reset/body; hang wins over everything.
 */
export interface ScriptedTurn {
  content?: ContentPart[];
  reasoning?: string;
  reasoningField?: string;
  toolCalls?: ScriptedToolCall[];
  finishReason?: string;
  /** `null` sends no usage; absent sends a rough estimate. */
  usage?: Usage | null;
  /** Put usage on the finish_reason chunk (llama.cpp style) instead of a trailing `choices: []` chunk. */
  usageOnFinishChunk?: boolean;
  chunkSize?: number;
  httpError?: { status: number; retryAfter?: number; body?: string };
  /** Counts every `data:` event written, including a malformed one; non-streamed, half the JSON is sent. */
  dropAfter?: number;
  delayFirstByte?: number;
  delayBetweenChunks?: number;
  hang?: boolean;
  reset?: boolean;
  /** Streamed only: one `data: {not json` event mid-stream. */
  malformedChunk?: boolean;
  /** Exact response body; split on blank lines so dropAfter and delayBetweenChunks still apply. */
  raw?: string;
}

type Usage = { prompt: number; completion: number };

/** Chainable; every method records plain data, so `build()` output can live in a JSON script file. */
export class TurnBuilder {
  readonly #turn: ScriptedTurn = {};

  #set<K extends keyof ScriptedTurn>(key: K, value: ScriptedTurn[K]): this {
    this.#turn[key] = value;
    return this;
  }
  #part(type: ContentPart['type'], text: string): this {
    return this.#set('content', [...(this.#turn.content ?? []), { type, text }]);
  }

  readonly text = (s: string) => this.#part('text', s);
  readonly think = (s: string) => this.#part('think', s);
  readonly reasoning = (s: string) => this.#set('reasoning', (this.#turn.reasoning ?? '') + s);
  readonly reasoningField = (s: string) => this.#set('reasoningField', (this.#turn.reasoningField ?? '') + s);
  readonly tool = (
    name: string,
    args: object | string,
    opts: { id?: string | null; argsAsObject?: boolean } = {},
  ) => this.#set('toolCalls', [...(this.#turn.toolCalls ?? []), { name, args, ...opts }]);
  readonly finish = (reason: string) => this.#set('finishReason', reason);
  /** Same as `.finish('stop')`, even with tool calls (some servers really do that). */
  readonly stop = () => this.finish('stop');
  readonly usage = (u: Usage | null) => this.#set('usage', u);
  readonly usageOnFinishChunk = () => this.#set('usageOnFinishChunk', true);
  readonly chunkSize = (n: number) => {
    if (!Number.isInteger(n) || n < 1) throw new Error(`chunkSize must be a positive integer, got ${n}`);
    return this.#set('chunkSize', n);
  };
  readonly httpError = (status: number, opts: { retryAfter?: number; body?: string } = {}) =>
    this.#set('httpError', { status, ...opts });
  readonly dropAfter = (nChunks: number) => this.#set('dropAfter', nChunks);
  readonly delayFirstByte = (ms: number) => this.#set('delayFirstByte', ms);
  readonly delayBetweenChunks = (ms: number) => this.#set('delayBetweenChunks', ms);
  readonly hang = () => this.#set('hang', true);
  /** Destroy the connection (TCP RST) without sending a response. */
  readonly reset = () => this.#set('reset', true);
  readonly malformedChunk = () => this.#set('malformedChunk', true);
  readonly raw = (sseBodyText: string) => this.#set('raw', sseBodyText);

  build(): ScriptedTurn {
    return structuredClone(this.#turn);
  }
  toJSON(): ScriptedTurn {
    return this.build();
  }
}

export function reply(): TurnBuilder {
  return new TurnBuilder();
}

export type TurnInput = TurnBuilder | ScriptedTurn;

function toTurn(t: TurnInput): ScriptedTurn {
  // Duck-typed rather than instanceof: vitest and tsx may load this module twice.
  return t instanceof TurnBuilder || typeof (t as { build?: unknown }).build === 'function'
    ? (t as TurnBuilder).build()
    : structuredClone(t as ScriptedTurn);
}

// ---- rendering a turn -------------------------------------------------------------------------------

interface RenderContext {
  model: string;
  turnNo: number;
  promptChars: number;
}

function cutAt(s: string, cuts: number[]): string[] {
  const out: string[] = [];
  let from = 0;
  for (const c of [...new Set(cuts)].sort((a, b) => a - b)) {
    if (c <= from || c >= s.length) continue;
    out.push(s.slice(from, c));
    from = c;
  }
  if (from < s.length) out.push(s.slice(from));
  return out;
}

function splitEvery(s: string, n: number): string[] {
  const cuts: number[] = [];
  for (let i = n; i < s.length; i += n) cuts.push(i);
  return cutAt(s, cuts);
}

function contentPieces(parts: ContentPart[], size: number): string[] {
  const out: string[] = [];
  for (const p of parts) {
    if (p.type === 'text') {
      out.push(...splitEvery(p.text, size));
      continue;
    }
    // Cut through the middle of both tags so parsers must handle tags spanning deltas.
    const full = `<think>${p.text}</think>`;
    const cuts = [3, 7 + p.text.length + 4];
    for (let i = size; i < full.length; i += size) cuts.push(i);
    out.push(...cutAt(full, cuts));
  }
  return out;
}

// Varying piece sizes catch clients that assume arguments arrive in whole tokens or fixed widths.
const ARG_PIECE_SIZES = [3, 5, 7, 4, 6];

function argPieces(s: string): string[] {
  const cuts: number[] = [];
  for (let i = 0, at = 0; at < s.length; i++) {
    at += ARG_PIECE_SIZES[i % ARG_PIECE_SIZES.length]!;
    cuts.push(at);
  }
  return cutAt(s, cuts);
}

function argsString(call: ScriptedToolCall): string {
  return typeof call.args === 'string' ? call.args : JSON.stringify(call.args);
}

function argsObject(call: ScriptedToolCall): unknown {
  if (typeof call.args !== 'string') return call.args;
  try {
    return JSON.parse(call.args);
  } catch {
    return call.args;
  }
}

function toolId(call: ScriptedToolCall, ctx: RenderContext, index: number): { id?: string } {
  if (call.id === null) return {};
  return { id: call.id ?? `call_${ctx.turnNo}_${index}` };
}

function contentText(turn: ScriptedTurn): string {
  return (turn.content ?? []).map((p) => (p.type === 'think' ? `<think>${p.text}</think>` : p.text)).join('');
}

function finishReason(turn: ScriptedTurn): string {
  return turn.finishReason ?? (turn.toolCalls?.length ? 'tool_calls' : 'stop');
}

function usageOf(turn: ScriptedTurn, ctx: RenderContext) {
  if (turn.usage === null) return undefined;
  const chars =
    contentText(turn).length +
    (turn.reasoning ?? '').length +
    (turn.reasoningField ?? '').length +
    (turn.toolCalls ?? []).reduce((n, c) => n + c.name.length + argsString(c).length, 0);
  const prompt = turn.usage?.prompt ?? Math.max(1, Math.ceil(ctx.promptChars / 4));
  const completion = turn.usage?.completion ?? Math.ceil(chars / 4);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function renderCompletion(turn: ScriptedTurn, ctx: RenderContext): object {
  const text = contentText(turn);
  const calls = turn.toolCalls ?? [];
  const message: Record<string, unknown> = { role: 'assistant', content: text || (calls.length ? null : '') };
  if (turn.reasoning !== undefined) message.reasoning_content = turn.reasoning;
  if (turn.reasoningField !== undefined) message.reasoning = turn.reasoningField;
  if (calls.length) {
    message.tool_calls = calls.map((c, i) => ({
      ...toolId(c, ctx, i),
      type: 'function',
      function: { name: c.name, arguments: c.argsAsObject ? argsObject(c) : argsString(c) },
    }));
  }
  const usage = usageOf(turn, ctx);
  return {
    id: `chatcmpl-scripted-${ctx.turnNo}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
    choices: [{ index: 0, message, finish_reason: finishReason(turn) }],
    ...(usage ? { usage } : {}),
  };
}

function renderChunks(turn: ScriptedTurn, ctx: RenderContext): string[] {
  const size = turn.chunkSize ?? 8;
  const base = {
    id: `chatcmpl-scripted-${ctx.turnNo}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
  };
  const chunk = (delta: object, finish: string | null = null): object => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const chunks: object[] = [chunk({ role: 'assistant', content: '' })];
  for (const piece of splitEvery(turn.reasoning ?? '', size))
    chunks.push(chunk({ reasoning_content: piece }));
  for (const piece of splitEvery(turn.reasoningField ?? '', size)) chunks.push(chunk({ reasoning: piece }));
  for (const piece of contentPieces(turn.content ?? [], size)) chunks.push(chunk({ content: piece }));
  (turn.toolCalls ?? []).forEach((call, index) => {
    const head = { index, ...toolId(call, ctx, index), type: 'function' };
    if (call.argsAsObject) {
      chunks.push(
        chunk({ tool_calls: [{ ...head, function: { name: call.name, arguments: argsObject(call) } }] }),
      );
      return;
    }
    chunks.push(chunk({ tool_calls: [{ ...head, function: { name: call.name, arguments: '' } }] }));
    for (const piece of argPieces(argsString(call))) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  const usage = usageOf(turn, ctx);
  const last = chunk({}, finishReason(turn));
  if (usage && turn.usageOnFinishChunk) chunks.push({ ...last, usage });
  else {
    chunks.push(last);
    if (usage) chunks.push({ ...base, choices: [], usage });
  }
  const events = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`);
  if (turn.malformedChunk) events.splice(Math.floor(events.length / 2), 0, 'data: {not json\n\n');
  return events;
}

// ---- rendering a turn in Ollama's native dialect (POST /api/chat) ------------------------------------

/** Ollama has one reasoning channel, `message.thinking`: think parts and both reasoning fields go there. */
function ollamaThinking(turn: ScriptedTurn): string {
  const parts = (turn.content ?? []).filter((p) => p.type === 'think').map((p) => p.text);
  return [turn.reasoning ?? '', turn.reasoningField ?? '', ...parts].join('');
}

function ollamaText(turn: ScriptedTurn): string {
  return (turn.content ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
}

/** Ollama sends no ids unless the script names one. */
function ollamaToolCall(call: ScriptedToolCall, index: number): object {
  return {
    ...(typeof call.id === 'string' ? { id: call.id } : {}),
    function: { ...(index > 0 ? { index } : {}), name: call.name, arguments: argsObject(call) },
  };
}

function ollamaDone(turn: ScriptedTurn, ctx: RenderContext): object {
  const usage = usageOf(turn, ctx);
  return {
    done: true,
    // Ollama says "stop" even after tool calls.
    done_reason: turn.finishReason ?? 'stop',
    total_duration: 1_234_567_890,
    load_duration: 12_345_678,
    ...(usage
      ? {
          prompt_eval_count: usage.prompt_tokens,
          prompt_eval_duration: 234_567_890,
          eval_count: usage.completion_tokens,
          eval_duration: 987_654_321,
        }
      : {}),
  };
}

function renderOllamaResponse(turn: ScriptedTurn, ctx: RenderContext): object {
  const calls = turn.toolCalls ?? [];
  const thinking = ollamaThinking(turn);
  const message: Record<string, unknown> = { role: 'assistant', content: ollamaText(turn) };
  if (thinking) message.thinking = thinking;
  if (calls.length) message.tool_calls = calls.map(ollamaToolCall);
  return { model: ctx.model, created_at: new Date().toISOString(), message, ...ollamaDone(turn, ctx) };
}

function renderOllamaLines(turn: ScriptedTurn, ctx: RenderContext): string[] {
  const size = turn.chunkSize ?? 8;
  const line = (message: object) => ({
    model: ctx.model,
    created_at: new Date().toISOString(),
    message: { role: 'assistant', content: '', ...message },
    done: false,
  });
  const lines: object[] = [];
  for (const piece of splitEvery(ollamaThinking(turn), size)) lines.push(line({ thinking: piece }));
  for (const piece of splitEvery(ollamaText(turn), size)) lines.push(line({ content: piece }));
  (turn.toolCalls ?? []).forEach((call, index) => {
    lines.push(line({ tool_calls: [ollamaToolCall(call, index)] }));
  });
  lines.push({ ...line({}), ...ollamaDone(turn, ctx) });
  const out = lines.map((l) => `${JSON.stringify(l)}\n`);
  if (turn.malformedChunk) out.splice(Math.floor(out.length / 2), 0, '{not json\n');
  return out;
}

// ---- the server -------------------------------------------------------------------------------------

/** Chat routes share one script; each renders a turn in its server's wire format. */
type Dialect = 'openai' | 'ollama';

const chatDialects: Record<string, Dialect | undefined> = {
  'POST /v1/chat/completions': 'openai',
  'POST /api/chat': 'ollama',
};

export interface RecordedRequest {
  path: string;
  method: string;
  /** Lower-cased names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  /** Parsed JSON, or undefined when the body was empty or not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: tests reach into arbitrary request shapes; the contract is `any`.
  body: any;
  raw: string;
}

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
  /** Resolves once at least `n` chat completion requests have arrived (useful with `.hang()`). */
  waitForRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  close(): Promise<void>;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

function write(res: ServerResponse, text: string): Promise<void> {
  // Waiting for the flush matters: destroying the socket right after write() would drop corked data.
  return new Promise((resolve) => {
    res.write(text, () => resolve());
  });
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

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

export function embed(text: string, dims = 16): number[] {
  const bytes: number[] = [];
  for (let block = 0; bytes.length < dims * 2; block++) {
    bytes.push(...createHash('sha256').update(`${block}:${text}`).digest());
  }
  const v = Array.from({ length: dims }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!) / 32767.5 - 1);
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

function embeddingInputs(input: unknown): string[] {
  const list = Array.isArray(input) && input.every((x) => typeof x !== 'number') ? input : [input];
  return list.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
}

export async function startScriptedServer(opts: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const turns = (opts.turns ?? []).map(toTurn);
  const models = opts.models ?? ['scripted-model'];
  const requests: RecordedRequest[] = [];
  const allRequests: RecordedRequest[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const closing = new AbortController();
  let played = 0;

  async function serveTurn(
    turn: ScriptedTurn,
    req: IncomingMessage,
    res: ServerResponse,
    rec: RecordedRequest,
    dialect: Dialect,
  ) {
    if (turn.hang) return; // close() destroys the socket, the client's abort closes it otherwise
    const gone = new AbortController();
    const onClosing = () => gone.abort();
    closing.signal.addEventListener('abort', onClosing);
    res.on('close', () => {
      gone.abort();
      closing.signal.removeEventListener('abort', onClosing);
    });
    if (turn.delayFirstByte) await sleep(turn.delayFirstByte, gone.signal);
    if (gone.signal.aborted) return;
    if (turn.reset) {
      req.socket.resetAndDestroy();
      return;
    }
    if (turn.httpError) {
      const { status, retryAfter, body } = turn.httpError;
      const error =
        dialect === 'ollama'
          ? { error: `scripted HTTP ${status}` }
          : { error: { message: `scripted HTTP ${status}`, code: status } };
      const text = body ?? JSON.stringify(error);
      const isJson = body === undefined || /^\s*[[{]/.test(body);
      res.writeHead(status, {
        'content-type': isJson ? 'application/json' : 'text/plain',
        ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}),
      });
      res.end(text);
      return;
    }
    const ctx: RenderContext = {
      model: typeof rec.body.model === 'string' ? rec.body.model : models[0]!,
      turnNo: played,
      promptChars: rec.raw.length,
    };
    // Ollama streams unless told not to; OpenAI servers only when asked.
    const streamed = dialect === 'ollama' ? rec.body.stream !== false : rec.body.stream === true;
    if (!streamed) {
      const rendered = dialect === 'ollama' ? renderOllamaResponse(turn, ctx) : renderCompletion(turn, ctx);
      const text = turn.raw ?? JSON.stringify(rendered);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      if (turn.dropAfter === undefined) return void res.end(text);
      await write(res, text.slice(0, Math.floor(text.length / 2)));
      res.destroy();
      return;
    }
    const ollama = dialect === 'ollama';
    const events =
      turn.raw !== undefined
        ? turn.raw.split(ollama ? /(?<=\n)/ : /(?<=\n\n)/)
        : ollama
          ? renderOllamaLines(turn, ctx)
          : renderChunks(turn, ctx);
    if (turn.raw === undefined && !ollama) events.push('data: [DONE]\n\n');
    // A dropped stream never gets its terminator: `[DONE]`, or Ollama's `done: true` line.
    const count =
      turn.dropAfter === undefined
        ? events.length
        : Math.min(turn.dropAfter, events.length - (turn.raw === undefined ? 1 : 0));
    res.writeHead(200, {
      'content-type': ollama ? 'application/x-ndjson' : 'text/event-stream',
      'cache-control': 'no-cache',
    });
    res.flushHeaders();
    for (let i = 0; i < count; i++) {
      if (i > 0 && turn.delayBetweenChunks) await sleep(turn.delayBetweenChunks, gone.signal);
      if (gone.signal.aborted) return;
      await write(res, events[i]!);
    }
    if (turn.dropAfter !== undefined) res.destroy();
    else res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const method = req.method ?? 'GET';
    const pathname = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const key = `${method} ${pathname}`;
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = undefined;
    }
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
    for (const w of waiters.filter((w) => requests.length >= w.n)) w.resolve();

    const extra = opts.extraRoutes?.[key];
    if (extra) {
      const out = await extra(req, body);
      return sendJson(res, out.status ?? 200, out.json);
    }
    if (isChat) {
      if (typeof body !== 'object' || body === null) {
        return sendError(res, 400, 'request body is not a JSON object');
      }
      const turn = turns.shift();
      if (!turn) return sendError(res, 500, `no more turns (${played} played)`);
      played++;
      return serveTurn(turn, req, res, rec, dialect);
    }
    if (key === 'GET /v1/models') {
      const data = models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'scripted' }));
      return sendJson(res, 200, { object: 'list', data });
    }
    if (key === 'POST /v1/embeddings') {
      const input = (body as { input?: unknown } | undefined)?.input;
      if (input === undefined) return sendError(res, 400, 'embeddings need an input');
      const inputs = embeddingInputs(input);
      const tokens = Math.max(1, Math.ceil(inputs.join('').length / 4));
      return sendJson(res, 200, {
        object: 'list',
        data: inputs.map((s, index) => ({
          object: 'embedding',
          index,
          embedding: embed(s, opts.embeddingDims),
        })),
        model: (body as { model?: unknown }).model ?? 'scripted-embedding',
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      });
    }
    sendError(res, 404, `no route for ${key}`);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      sendError(res, 500, `crashed: ${String(err)}`);
    });
  });
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
    waitForRequests(n, timeoutMs = 5000) {
      if (requests.length >= n) return Promise.resolve(requests.slice());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(
            new Error(`scripted server: waited ${timeoutMs}ms for ${n} requests, got ${requests.length}`),
          );
        }, timeoutMs);
        const waiter = {
          n,
          resolve: () => {
            clearTimeout(timer);
            waiters.splice(waiters.indexOf(waiter), 1);
            resolve(requests.slice());
          },
        };
        waiters.push(waiter);
      });
    },
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
