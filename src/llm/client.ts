import { DeltaAssembler } from './assemble.js';
import {
  defaultRetryPolicy,
  isRetryableStatus,
  parseRetryAfter,
  type RetryPolicy,
  retryDelay,
  sleep,
} from './retry.js';
import { readSseData } from './sse.js';
import type { ChatMessage, LlmError, LlmEvent, ToolSchema } from './types.js';

export interface LlmClientOptions {
  /** OpenAI-compatible base URL ending in /v1. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Whole-request limit. Local models may spend minutes on a long prompt. */
  timeoutMs?: number;
  /** Longest silence allowed between streamed chunks: local servers sometimes hang. */
  idleTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  temperature?: number;
  maxTokens?: number;
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolSchema[];
  signal?: AbortSignal;
}

export interface LlmClient {
  readonly model: string;
  readonly baseUrl: string;
  /** Never throws: ends with exactly one `done` or `error` event. */
  stream(request: ChatRequest): AsyncGenerator<LlmEvent>;
}

type Attempt =
  | { outcome: 'done' }
  | { outcome: 'fail'; error: LlmError }
  | { outcome: 'retry'; reason: string; retryAfterMs?: number };

const CONTEXT_OVERFLOW =
  /context (length|window|size)|maximum context|too many tokens|exceeds? (the )?(context|available)|prompt is too long|n_ctx/i;

export function createLlmClient(options: LlmClientOptions): LlmClient {
  const policy: RetryPolicy = { ...defaultRetryPolicy, ...options.retry };
  const timeoutMs = options.timeoutMs ?? 600_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 180_000;
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  async function* attempt(request: ChatRequest, body: string): AsyncGenerator<LlmEvent, Attempt> {
    const controller = new AbortController();
    let why: 'timeout' | 'idle' | undefined;
    const onUserAbort = () => controller.abort();
    request.signal?.addEventListener('abort', onUserAbort, { once: true });
    const total = setTimeout(() => {
      why = 'timeout';
      controller.abort();
    }, timeoutMs);
    let idle: NodeJS.Timeout | undefined;
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        why = 'idle';
        controller.abort();
      }, idleTimeoutMs);
    };
    const failure = (err: unknown, streaming: boolean): Attempt => {
      if (request.signal?.aborted)
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
      if (why === 'idle') {
        return {
          outcome: 'fail',
          error: {
            kind: 'timeout',
            message: `The model server sent nothing for ${Math.round(idleTimeoutMs / 1000)}s${streaming ? ' in the middle of a reply' : ''}; it may be stuck. Check the server's log, or raise the idle timeout.`,
          },
        };
      }
      const reason = describeNetworkError(err);
      return { outcome: 'retry', reason: streaming ? `connection dropped mid-stream (${reason})` : reason };
    };

    try {
      touch();
      let response: Response;
      try {
        response = await fetch(url, { method: 'POST', headers, body, signal: controller.signal });
      } catch (err) {
        return failure(err, false);
      }
      if (!response.ok) {
        const text = await response.text().catch(() => '');
        const message = `${response.status} ${response.statusText}: ${serverMessage(text)}`.trim();
        if (
          CONTEXT_OVERFLOW.test(text) &&
          (response.status === 400 || response.status === 413 || response.status >= 500)
        ) {
          return { outcome: 'fail', error: { kind: 'context_overflow', status: response.status, message } };
        }
        if (isRetryableStatus(response.status)) {
          return {
            outcome: 'retry',
            reason: message,
            retryAfterMs: parseRetryAfter(response.headers.get('retry-after')),
          };
        }
        return {
          outcome: 'fail',
          error: { kind: 'http', status: response.status, message: explainStatus(response.status, message) },
        };
      }

      const assembler = new DeltaAssembler();
      let sawEnd = false;
      let malformed = 0;
      try {
        const isJson = (response.headers.get('content-type') ?? '').includes('application/json');
        if (isJson) {
          yield* assembler.push(JSON.parse(await response.text()));
          sawEnd = true;
        } else if (response.body) {
          for await (const data of readSseData(response.body)) {
            touch();
            if (data.trim() === '[DONE]') {
              sawEnd = true;
              break;
            }
            let chunk: unknown;
            try {
              chunk = JSON.parse(data);
            } catch {
              malformed++;
              continue;
            }
            const error = (chunk as { error?: unknown }).error;
            if (error) {
              const message = serverMessage(JSON.stringify(error));
              const kind = CONTEXT_OVERFLOW.test(message) ? 'context_overflow' : 'http';
              return {
                outcome: 'fail',
                error: { kind, message: `The server reported an error mid-stream: ${message}` },
              };
            }
            yield* assembler.push(chunk);
          }
        }
      } catch (err) {
        return failure(err, true);
      }
      if (!sawEnd && !assembler.sawFinish) {
        return { outcome: 'retry', reason: 'the stream ended before the reply was complete' };
      }
      const result = assembler.finish(request.tools ?? []);
      if (malformed > 0) {
        yield { type: 'warning', message: `Ignored ${malformed} malformed chunk(s) from the model server.` };
      }
      yield* result.tail;
      yield {
        type: 'done',
        message: result.message,
        toolCalls: result.toolCalls,
        finishReason: result.finishReason,
        usage: result.usage,
      };
      return { outcome: 'done' };
    } finally {
      clearTimeout(total);
      clearTimeout(idle);
      request.signal?.removeEventListener('abort', onUserAbort);
    }
  }

  return {
    model: options.model,
    baseUrl: options.baseUrl,
    async *stream(request) {
      const body = JSON.stringify({
        model: options.model,
        messages: request.messages,
        ...(request.tools?.length ? { tools: request.tools } : {}),
        stream: true,
        stream_options: { include_usage: true },
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        ...(options.maxTokens !== undefined ? { max_tokens: options.maxTokens } : {}),
      });
      for (let n = 0; ; n++) {
        const result = yield* attempt(request, body);
        if (result.outcome === 'done') return;
        if (result.outcome === 'fail') {
          yield { type: 'error', error: result.error };
          return;
        }
        if (n >= policy.maxRetries) {
          yield {
            type: 'error',
            error: {
              kind: 'network',
              message: `Gave up after ${n + 1} attempts: ${result.reason}. Is the model server at ${options.baseUrl} running?`,
            },
          };
          return;
        }
        const delayMs = retryDelay(policy, n, result.retryAfterMs);
        yield { type: 'retry', attempt: n + 1, delayMs, reason: result.reason };
        if (!(await sleep(delayMs, request.signal))) {
          yield { type: 'error', error: { kind: 'aborted', message: 'Request cancelled.' } };
          return;
        }
      }
    },
  };
}

/** Pulls the human part out of an error body (`{"error":{"message":...}}` or plain text). */
function serverMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    const error = parsed.error;
    if (typeof error === 'string') return error;
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
