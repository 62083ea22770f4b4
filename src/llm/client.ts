import type { ReasoningLevel } from '../config/model-schema.js';
import type { Clock } from '../util/clock.js';
import { alternating } from './alternation.js';
import { DeltaAssembler, type ReplyHabits } from './assemble.js';
import type { ServerKind } from './discover.js';
import { templateOpensReasoning } from './formats/reply.js';
import type { HttpReply } from './http-post.js';
import {
  type AttemptOutcome,
  finishReply,
  type Malformed,
  midStreamError,
  streamWithRetries,
} from './http-stream.js';
import { ReasoningControl } from './reasoning-control.js';
import { RequestBodies } from './request-body.js';
import type { RetryPolicy } from './retry.js';
import { readSseData } from './sse.js';
import type { ChatMessage, LlmEvent, ToolSchema } from './types.js';

export interface LlmClientOptions {
  /** OpenAI-compatible base URL ending in /v1. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Whole-request limit. Local models may spend minutes on a long prompt. */
  timeoutMs?: number;
  /** Longest silence allowed between streamed chunks: local servers sometimes hang. */
  idleTimeoutMs?: number;
  /** Longest wait for the first chunk, while the server reads the prompt; default `timeoutMs`. */
  firstByteTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Drives the timeouts and retry backoff; the system clock unless a test injects one. */
  clock?: Clock;
  temperature?: number;
  topP?: number;
  seed?: number;
  /** Sent as the server names it: `repeat_penalty` (llama.cpp, LM Studio), else `repetition_penalty`. */
  repetitionPenalty?: number;
  maxTokens?: number;
  /**
   * False for models without a tool-calling template: the tools are then not sent as `tools`
   * (the system prompt describes them) and calls are read from the text.
   */
  nativeTools?: boolean;
  /**
   * llama.cpp: the server slot every request of this client uses (`id_slot`), so the slot's prompt
   * cache holds this conversation and no other; unset lets the server choose.
   */
  slot?: number;
  /** What the server is, for the fields that carry the reasoning setting. */
  serverKind?: ServerKind;
  /** The session's reasoning setting, read at every request (it may change between two). */
  reasoning?: () => ReasoningLevel | undefined;
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolSchema[];
  /** 'required': the reply must be a tool call (OpenAI `tool_choice`); 'auto' or unset lets the model choose. */
  toolChoice?: 'auto' | 'required';
  signal?: AbortSignal;
  /** OpenAI `response_format` (e.g. a JSON schema), for servers that constrain output to it. */
  responseFormat?: unknown;
}

export interface LlmClient {
  readonly model: string;
  readonly baseUrl: string;
  /** Never throws: ends with exactly one `done` or `error` event. */
  stream(request: ChatRequest): AsyncGenerator<LlmEvent>;
}

export function createLlmClient(options: LlmClientOptions): LlmClient {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  // With thinking off, the template opens no reasoning, whatever the model's name suggests.
  const habits: ReplyHabits = {
    opensInReasoning: templateOpensReasoning(options.model) && options.reasoning?.() !== 'off',
  };
  const bodies = new RequestBodies();
  const reasoning = new ReasoningControl(
    options.serverKind,
    options.model,
    options.reasoning ?? (() => undefined),
  );

  return {
    model: options.model,
    baseUrl: options.baseUrl,
    stream(request) {
      const body = bodies.chat(
        options.model,
        alternating(request.messages),
        {
          tools: request.tools?.length && options.nativeTools !== false ? request.tools : undefined,
          tool_choice:
            request.toolChoice && request.tools?.length && options.nativeTools !== false
              ? request.toolChoice
              : undefined,
          stream: true,
          stream_options: { include_usage: true },
          temperature: options.temperature,
          top_p: options.topP,
          seed: options.seed,
          ...repetitionPenalty(options),
          max_tokens: options.maxTokens,
          id_slot: options.slot,
          response_format: request.responseFormat,
          ...reasoning.fields(),
        },
        toOpenAiMessage,
      );
      const offered = request.tools ?? [];
      return reasoning.noted(
        streamWithRetries(
          {
            url,
            headers,
            body,
            baseUrl: options.baseUrl,
            read: (response, touch, timing) =>
              readOpenAiReply(response, touch, new DeltaAssembler(offered, habits, timing)),
          },
          options,
          request.signal,
        ),
      );
    },
  };
}

/** llama.cpp's server and LM Studio read `repeat_penalty`; vLLM, mlx-lm and most others `repetition_penalty`. */
function repetitionPenalty(options: LlmClientOptions): Record<string, number> {
  const penalty = options.repetitionPenalty;
  if (penalty === undefined) return {};
  const llamaNamed = options.serverKind === 'llamacpp' || options.serverKind === 'lmstudio';
  return llamaNamed ? { repeat_penalty: penalty } : { repetition_penalty: penalty };
}

/** Reads an SSE stream of `chat.completion.chunk`s, or a whole `chat.completion` from servers that ignore `stream`. */
async function* readOpenAiReply(
  response: HttpReply,
  touch: () => void,
  assembler: DeltaAssembler,
): AsyncGenerator<LlmEvent, AttemptOutcome> {
  let sawEnd = false;
  const malformed: Malformed = { count: 0 };
  if (response.header('content-type').includes('application/json')) {
    yield* assembler.push(JSON.parse(await response.text()));
    sawEnd = true;
  } else {
    // A chunk some servers split over two events: its first part waits for the rest.
    let partial = '';
    for await (const data of readSseData(response.body)) {
      touch();
      if (data.trim() === '[DONE]') {
        sawEnd = true;
        break;
      }
      let chunk = parseChunk(partial + data);
      if (chunk === undefined && partial) {
        malformed.count++;
        malformed.first ??= partial;
        chunk = parseChunk(data);
      }
      partial = chunk === undefined ? data : '';
      if (chunk === undefined) continue;
      const error = (chunk as { error?: unknown }).error;
      if (error) return midStreamError(error);
      yield* assembler.push(chunk);
    }
    if (partial) {
      malformed.count++;
      malformed.first ??= partial;
    }
  }
  if (!sawEnd && !assembler.sawFinish) {
    return { outcome: 'retry', reason: 'the stream ended before the reply was complete' };
  }
  return yield* finishReply(assembler, malformed);
}

/**
 * One event's JSON. Raw line breaks inside it (a chunk written over several `data:` lines, split
 * mid-string) are not JSON; without them it may be.
 */
function parseChunk(data: string): unknown {
  for (const text of [data, data.replace(/\r?\n/g, '')]) {
    try {
      return JSON.parse(text);
    } catch {
      // next form
    }
  }
  return undefined;
}

/** A user message with images becomes OpenAI content parts, the images as data URLs. */
function toOpenAiMessage(message: ChatMessage): unknown {
  if (message.role !== 'user' || !message.images?.length) return message;
  return {
    role: 'user',
    content: [
      { type: 'text', text: message.content },
      ...message.images.map((image) => ({
        type: 'image_url',
        image_url: { url: `data:${image.mimeType};base64,${image.base64}` },
      })),
    ],
  };
}
