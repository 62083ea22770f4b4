import { type Clock, sleep, systemClock, type TimerHandle } from '../util/clock.js';
import type { DeltaAssembler } from './assemble.js';
import { CONTEXT_OVERFLOW, windowFromError } from './context-overflow.js';
import { type HttpReply, postStreaming } from './http-post.js';
import {
  defaultRetryPolicy,
  isRetryableStatus,
  parseRetryAfter,
  type RetryPolicy,
  retryDelay,
} from './retry.js';
import type { ReplyTiming } from './speed.js';
import type { LlmError, LlmEvent } from './types.js';

/** How one HTTP attempt ended; only `retry` leads to another attempt. */
export type AttemptOutcome =
  | { outcome: 'done' }
  | { outcome: 'fail'; error: LlmError }
  /** `status`: the HTTP status the server answered with, when it answered at all. */
  | { outcome: 'retry'; reason: string; retryAfterMs?: number; status?: number };

/** One streamed model request, in whatever dialect the server speaks. */
export interface StreamSpec {
  url: string;
  headers: Record<string, string>;
  /** The request body in pieces, sent one after another. */
  body: readonly Uint8Array[];
  /** Named in the give-up message, so the user knows which server to check. */
  baseUrl: string;
  /**
   * Turns a 2xx response into events and says how the attempt ended. Call `touch` for every
   * chunk received: it restarts the idle timer. A throw counts as a connection dropped mid-stream.
   * `timing`: when this attempt was sent, on the clock that times it.
   */
  read(response: HttpReply, touch: () => void, timing: ReplyTiming): AsyncGenerator<LlmEvent, AttemptOutcome>;
}

export interface StreamLimits {
  /** Whole-request limit. Local models may spend minutes on a long prompt. */
  timeoutMs?: number;
  /** Longest silence allowed between streamed chunks: local servers sometimes hang. */
  idleTimeoutMs?: number;
  /**
   * Longest wait for the reply's first chunk: the server reads the whole prompt before it sends
   * anything, which on slow hardware takes minutes. Defaults to the whole-request limit.
   */
  firstByteTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Drives the timeouts and the backoff between attempts; the system clock unless a test injects one. */
  clock?: Clock;
}

/**
 * Runs a request with the whole-request and idle timeouts, the user's abort signal and retries
 * with backoff. Never throws: ends with exactly one `done` or `error` event.
 */
export async function* streamWithRetries(
  spec: StreamSpec,
  limits: StreamLimits,
  signal?: AbortSignal,
): AsyncGenerator<LlmEvent> {
  const policy: RetryPolicy = { ...defaultRetryPolicy, ...limits.retry };
  for (let n = 0; ; n++) {
    const result = yield* attempt(spec, limits, signal);
    if (result.outcome === 'done') return;
    if (result.outcome === 'fail') {
      yield { type: 'error', error: result.error };
      return;
    }
    if (n >= policy.maxRetries) {
      // A server that answered with an error is running; asking whether it runs would mislead.
      const advice =
        result.status === undefined
          ? `Is the model server at ${spec.baseUrl} running?`
          : "The server is up but keeps failing this request: check the server's log.";
      yield {
        type: 'error',
        error: {
          kind: result.status === undefined ? 'network' : 'http',
          ...(result.status === undefined ? {} : { status: result.status }),
          message: `Gave up after ${n + 1} attempts: ${result.reason}. ${advice}`,
        },
      };
      return;
    }
    const delayMs = retryDelay(policy, n, result.retryAfterMs);
    yield { type: 'retry', attempt: n + 1, delayMs, reason: result.reason };
    if (!(await sleep(delayMs, signal, limits.clock))) {
      yield { type: 'error', error: { kind: 'aborted', message: 'Request cancelled.' } };
      return;
    }
  }
}

async function* attempt(
  spec: StreamSpec,
  limits: StreamLimits,
  signal: AbortSignal | undefined,
): AsyncGenerator<LlmEvent, AttemptOutcome> {
  const timeoutMs = limits.timeoutMs ?? 600_000;
  const idleTimeoutMs = limits.idleTimeoutMs ?? 180_000;
  const firstByteTimeoutMs = limits.firstByteTimeoutMs ?? timeoutMs;
  const clock = limits.clock ?? systemClock;
  const controller = new AbortController();
  let why: 'timeout' | 'idle' | 'first-byte' | undefined;
  const onUserAbort = () => controller.abort();
  signal?.addEventListener('abort', onUserAbort, { once: true });
  const total = clock.setTimeout(() => {
    why = 'timeout';
    controller.abort();
  }, timeoutMs);
  // Until the first chunk the server is still reading the prompt: the first-byte limit applies;
  // from then on, the idle limit between chunks.
  let idle: TimerHandle | undefined = clock.setTimeout(() => {
    why = 'first-byte';
    controller.abort();
  }, firstByteTimeoutMs);
  const touch = () => {
    clock.clearTimeout(idle);
    idle = clock.setTimeout(() => {
      why = 'idle';
      controller.abort();
    }, idleTimeoutMs);
  };
  const failure = (err: unknown, streaming: boolean): AttemptOutcome => {
    if (signal?.aborted)
      return { outcome: 'fail', error: { kind: 'aborted', message: 'Request cancelled.' } };
    if (why === 'timeout') {
      return {
        outcome: 'fail',
        error: {
          kind: 'timeout',
          message: `The model server did not finish within ${Math.round(timeoutMs / 1000)}s. On slow hardware raise the timeout (--timeout SECONDS).`,
        },
      };
    }
    if (why === 'first-byte') {
      return {
        outcome: 'fail',
        error: {
          kind: 'timeout',
          message: `The model server sent no reply within ${Math.round(firstByteTimeoutMs / 1000)}s; it may still be reading a long prompt. On slow hardware raise first_byte_timeout (seconds), or check the server's log.`,
        },
      };
    }
    if (why === 'idle') {
      return {
        outcome: 'fail',
        error: {
          kind: 'timeout',
          message: `The model server sent nothing for ${Math.round(idleTimeoutMs / 1000)}s in the middle of a reply; it may be stuck. Check the server's log, or raise idle_timeout (seconds).`,
        },
      };
    }
    const reason = describeNetworkError(err);
    return { outcome: 'retry', reason: streaming ? `connection dropped mid-stream (${reason})` : reason };
  };

  let response: HttpReply | undefined;
  let finished = false;
  const timing: ReplyTiming = { sentAt: clock.now(), now: () => clock.now() };
  try {
    try {
      response = await postStreaming(spec.url, spec.headers, spec.body, controller.signal);
    } catch (err) {
      return failure(err, false);
    }
    if (!response.ok) return await rejected(response, clock);
    if (response.header('content-type').includes('text/html')) return await htmlPage(response, spec);
    try {
      const outcome = yield* spec.read(response, touch, timing);
      finished = outcome.outcome === 'done';
      return outcome;
    } catch (err) {
      return failure(err, true);
    }
  } finally {
    clock.clearTimeout(total);
    clock.clearTimeout(idle);
    signal?.removeEventListener('abort', onUserAbort);
    // A consumer that stopped reading early must not leave the server generating for nobody; a
    // reply read to its end leaves the connection for the next request.
    if (finished) response?.release(clock);
    else controller.abort();
  }
}

/**
 * A page where a stream belongs: a proxy's login page, a web UI at the wrong path. Retrying gets the
 * same page, and reading it as a stream would end as an empty "success": say what came instead.
 */
async function htmlPage(response: HttpReply, spec: StreamSpec): Promise<AttemptOutcome> {
  const text = await response.text().catch(() => '');
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
  const words = text
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 160);
  return {
    outcome: 'fail',
    error: {
      kind: 'protocol',
      status: response.status,
      message: `The server at ${spec.baseUrl} answered with a web page (${title ? `"${title}"` : `"${words}"`}), not a model reply. Check base_url: it should be the server's OpenAI-compatible address, usually ending in /v1.`,
    },
  };
}

async function rejected(response: HttpReply, clock: Clock): Promise<AttemptOutcome> {
  const text = await response.text().catch(() => '');
  const message = `${response.status} ${response.statusText}: ${serverMessage(text)}`.trim();
  if (
    CONTEXT_OVERFLOW.test(text) &&
    (response.status === 400 || response.status === 413 || response.status >= 500)
  ) {
    return { outcome: 'fail', error: overflowError(text, message, response.status) };
  }
  if (isRetryableStatus(response.status)) {
    return {
      outcome: 'retry',
      reason: message,
      status: response.status,
      retryAfterMs: parseRetryAfter(response.header('retry-after') || null, clock.now()),
    };
  }
  return {
    outcome: 'fail',
    error: { kind: 'http', status: response.status, message: explainStatus(response.status, message) },
  };
}

/** An `error` object or string the server put in the stream instead of a chunk. */
export function midStreamError(error: unknown): AttemptOutcome {
  const raw = JSON.stringify(error);
  const said = serverMessage(raw);
  const message = `The server reported an error mid-stream: ${said}`;
  if (CONTEXT_OVERFLOW.test(said)) return { outcome: 'fail', error: overflowError(raw, message) };
  return { outcome: 'fail', error: { kind: 'http', message } };
}

/** A context-exceeded error, with the window the server named when it named one. */
function overflowError(body: string, message: string, status?: number): LlmError {
  const window = windowFromError(body);
  return {
    kind: 'context_overflow',
    message,
    ...(status !== undefined ? { status } : {}),
    ...(window !== undefined ? { contextWindow: window } : {}),
  };
}

/** The closing events of a reply once its stream ended properly. */
/** Malformed data a reply held: how many chunks, and the first, to show. */
export interface Malformed {
  count: number;
  first?: string;
}

/**
 * Ends a read reply. Malformed chunks with nothing usable beside them are a failure, not an empty
 * answer: the server did not say what it meant to.
 */
export function* finishReply(
  assembler: DeltaAssembler,
  malformed: Malformed,
): Generator<LlmEvent, AttemptOutcome> {
  const result = assembler.finish();
  const empty = !result.message.content?.trim() && result.toolCalls.length === 0 && !result.reasoning?.trim();
  if (malformed.count > 0 && empty) {
    return {
      outcome: 'fail',
      error: {
        kind: 'protocol',
        message: `The model server sent ${malformed.count} chunk(s) that are not JSON (the first: ${JSON.stringify((malformed.first ?? '').slice(0, 120))}) and no usable reply. Check the server's log; a proxy in between may be mangling the stream.`,
      },
    };
  }
  if (malformed.count > 0) {
    yield {
      type: 'warning',
      message: `Ignored ${malformed.count} malformed chunk(s) from the model server.`,
    };
  }
  for (const message of result.warnings) yield { type: 'warning', message };
  yield* result.tail;
  yield {
    type: 'done',
    message: result.message,
    reasoning: result.reasoning,
    toolCalls: result.toolCalls,
    finishReason: result.finishReason,
    usage: result.usage,
  };
  return { outcome: 'done' };
}

/**
 * Pulls the human part out of an error body (`{"error":{"message":...}}`, `{"error":"..."}` or
 * text). Ollama builds that run llama-server pass its error body on as the string in their own.
 */
function serverMessage(text: string, nested = false): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    const error = parsed.error;
    if (typeof error === 'string')
      return !nested && error.startsWith('{') ? serverMessage(error, true) : error;
    if (error?.message) return error.message;
    if (parsed.message) return parsed.message;
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, 500);
}

function explainStatus(status: number, message: string): string {
  if (status === 401 || status === 403) return `${message}. Check the API key (--api-key or HEARTH_API_KEY).`;
  if (status === 404) return `${message}. Check the base URL (it should end in /v1) and the model name.`;
  return message;
}

function describeNetworkError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  const code = cause?.code ?? (err as { code?: string })?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'connection reset';
  return cause?.message ?? (err instanceof Error ? err.message : String(err));
}
