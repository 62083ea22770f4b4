import { alternating } from './alternation.js';
import { DeltaAssembler, type ReplyHabits } from './assemble.js';
import type { ChatRequest, LlmClient, LlmClientOptions } from './client.js';
import { templateOpensReasoning } from './formats/reply.js';
import type { HttpReply } from './http-post.js';
import {
  type AttemptOutcome,
  finishReply,
  type Malformed,
  midStreamError,
  streamWithRetries,
} from './http-stream.js';
import { parseLooseJson } from './loose-json.js';
import { ReasoningControl } from './reasoning-control.js';
import { RequestBodies } from './request-body.js';
import { ollamaTimings } from './speed.js';
import type { ChatMessage, LlmEvent } from './types.js';

export interface OllamaClientOptions extends LlmClientOptions {
  /**
   * The `num_ctx` sent with every request: the window the session budgets with (see
   * `resolveContextWindow`). Unset, the server's own setting stands.
   */
  contextWindow?: number;
}

/** A message as Ollama's `/api/chat` takes it: tool arguments are objects, results name their tool. */
export type OllamaMessage =
  | { role: 'system' | 'user'; content: string; images?: string[] }
  | {
      role: 'assistant';
      content: string;
      tool_calls?: { id?: string; function: { name: string; arguments: Record<string, unknown> } }[];
    }
  | { role: 'tool'; content: string; tool_name?: string; tool_call_id?: string };

/**
 * An LlmClient over Ollama's native `/api/chat`. Its OpenAI-compatible endpoint ignores
 * `num_ctx`, so a long prompt is silently cut from the front at Ollama's small default
 * context, losing the system prompt and tools first; here every request says how much
 * context the session budgets with. Yields the same events as createLlmClient, with the same
 * retries, timeouts and abort.
 *
 * `num_ctx` is the same on every request, summaries included: Ollama reloads the model whenever
 * it changes, which costs seconds and throws away the cached prompt.
 */
export function createOllamaClient(options: OllamaClientOptions): LlmClient {
  const origin = ollamaOrigin(options.baseUrl);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/x-ndjson',
  };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  // With thinking off, the template opens no reasoning, whatever the model's name suggests.
  const habits: ReplyHabits = {
    opensInReasoning: templateOpensReasoning(options.model) && options.reasoning?.() !== 'off',
  };
  // Each message is converted and written once: the history grows by a few messages a step.
  const bodies = new RequestBodies();
  const toolNames = new Map<string, string>();
  const settings = {
    ...(options.contextWindow ? { num_ctx: options.contextWindow } : {}),
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(options.topP !== undefined ? { top_p: options.topP } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.repetitionPenalty !== undefined ? { repeat_penalty: options.repetitionPenalty } : {}),
    ...(options.maxTokens !== undefined ? { num_predict: options.maxTokens } : {}),
  };

  const reasoning = new ReasoningControl('ollama', options.model, options.reasoning ?? (() => undefined));

  return {
    model: options.model,
    baseUrl: options.baseUrl,
    stream(request: ChatRequest) {
      noteToolNames(request.messages, toolNames);
      const body = bodies.chat(
        options.model,
        alternating(request.messages),
        {
          tools: request.tools?.length && options.nativeTools !== false ? request.tools : undefined,
          stream: true,
          options: settings,
          ...reasoning.fields(),
        },
        (m) => toOllamaMessage(m, toolNames),
      );
      const offered = request.tools ?? [];
      return reasoning.noted(
        streamWithRetries(
          {
            url: `${origin}/api/chat`,
            headers,
            body,
            baseUrl: options.baseUrl,
            read: (response, touch, timing) =>
              readOllamaReply(response, touch, new DeltaAssembler(offered, habits, timing)),
          },
          options,
          request.signal,
        ),
      );
    },
  };
}

/** The server root: Ollama's native API lives beside `/v1`, not under it. */
export function ollamaOrigin(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** Adds the tool name of every call in `messages` to `names`, by call id: tool results name their tool. */
function noteToolNames(messages: readonly ChatMessage[], names: Map<string, string>): void {
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const call of m.tool_calls ?? []) names.set(call.id, call.function.name);
  }
}

/** One message of OpenAI-shaped history in Ollama's form: arguments become objects, tool results name their tool. */
function toOllamaMessage(m: ChatMessage, toolNames: ReadonlyMap<string, string>): OllamaMessage {
  if (m.role === 'assistant') {
    const out: OllamaMessage = { role: 'assistant', content: m.content ?? '' };
    if (m.tool_calls?.length) {
      out.tool_calls = m.tool_calls.map((call) => ({
        id: call.id,
        function: { name: call.function.name, arguments: argsObject(call.function.arguments) },
      }));
    }
    return out;
  }
  if (m.role === 'tool') {
    const name = toolNames.get(m.tool_call_id);
    return {
      role: 'tool',
      content: m.content,
      ...(name ? { tool_name: name } : {}),
      tool_call_id: m.tool_call_id,
    };
  }
  if (m.role === 'user' && m.images?.length) {
    return { role: 'user', content: m.content, images: m.images.map((image) => image.base64) };
  }
  return { role: m.role, content: m.content };
}

/** Ollama rejects a request whose arguments are not an object, so broken ones are sent empty. */
function argsObject(text: string): Record<string, unknown> {
  const parsed = parseLooseJson(text);
  const value = parsed?.value;
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/**
 * Reads Ollama's NDJSON stream by translating each line into the OpenAI chunk the
 * DeltaAssembler already understands, so reasoning, `<think>` tags, text-format tool calls
 * and id synthesis behave exactly as in the OpenAI transport.
 */
async function* readOllamaReply(
  response: HttpReply,
  touch: () => void,
  assembler: DeltaAssembler,
): AsyncGenerator<LlmEvent, AttemptOutcome> {
  let sawDone = false;
  const malformed: Malformed = { count: 0 };
  let callCount = 0;
  const nextIndex = () => callCount++;
  for await (const line of readLines(response.body)) {
    touch();
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      malformed.count++;
      malformed.first ??= line;
      continue;
    }
    const record = asRecord(parsed);
    if (record.error) return midStreamError(record.error);
    yield* assembler.push(toOpenAiChunk(record, nextIndex, () => callCount));
    if (record.done === true) {
      sawDone = true;
      break;
    }
  }
  if (!sawDone) return { outcome: 'retry', reason: 'the stream ended before the reply was complete' };
  return yield* finishReply(assembler, malformed);
}

function toOpenAiChunk(
  line: Record<string, unknown>,
  nextIndex: () => number,
  callsSoFar: () => number,
): object {
  const message = asRecord(line.message);
  const delta: Record<string, unknown> = {};
  if (typeof message.thinking === 'string') delta.reasoning = message.thinking;
  if (typeof message.content === 'string') delta.content = message.content;
  if (Array.isArray(message.tool_calls)) {
    // Each call arrives whole, and Ollama's own `index` is omitted when zero: number them here.
    delta.tool_calls = message.tool_calls.map((raw) => {
      const call = asRecord(raw);
      const fn = asRecord(call.function);
      return {
        index: nextIndex(),
        ...(typeof call.id === 'string' && call.id !== '' ? { id: call.id } : {}),
        function: { name: fn.name, arguments: fn.arguments ?? {} },
      };
    });
  }
  const chunk: Record<string, unknown> = { choices: [{ delta, finish_reason: null }] };
  if (line.done === true) {
    // Ollama says "stop" after native tool calls; the OpenAI transport says "tool_calls".
    const reason =
      typeof line.done_reason === 'string' && line.done_reason !== '' ? line.done_reason : 'stop';
    chunk.choices = [{ delta, finish_reason: reason === 'stop' && callsSoFar() > 0 ? 'tool_calls' : reason }];
    if (typeof line.prompt_eval_count === 'number' || typeof line.eval_count === 'number') {
      chunk.usage = { prompt_tokens: line.prompt_eval_count ?? 0, completion_tokens: line.eval_count ?? 0 };
      chunk.timings = ollamaTimings(line);
    }
  }
  return chunk;
}

async function* readLines(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const value of body) {
    buffer += decoder.decode(value, { stream: true });
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      yield buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
    }
  }
  buffer += decoder.decode();
  if (buffer !== '') yield buffer;
}

function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}
