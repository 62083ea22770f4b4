/** A tool call as the agent keeps it: `arguments` is the raw JSON text the model produced. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
  /**
   * Set when the call must not run: its arguments were cut off or unreadable (`arguments` is then
   * `{}`). Worded for the model; the registry answers the call with it.
   */
  problem?: string;
}

/** OpenAI wire shape of a tool call inside an assistant message. */
export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** An image sent with a user message, for a model that accepts images. */
export interface ImagePart {
  mimeType: string;
  base64: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  /** `images`: sent as OpenAI `image_url` parts, or Ollama's native `images`; `content` stays the text alone. */
  | { role: 'user'; content: string; images?: ImagePart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

/** OpenAI `tools` entry. */
export interface ToolSchema {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface Usage {
  prompt: number;
  completion: number;
  speed?: Speed;
}

/**
 * How fast one reply came: the server's own figures where it gives them (llama.cpp `timings`,
 * Ollama's durations, LM Studio `stats`, cached tokens in OpenAI-style usage), else measured by
 * Hearth. Fields neither could tell are left out.
 */
export interface Speed {
  /** Prompt tokens the server took from its prompt cache. */
  cached?: number;
  /** Prompt tokens it processed for this reply. */
  processed?: number;
  /** Prompt processing and generation, tokens per second. */
  promptTps?: number;
  genTps?: number;
  /** From sending the request to the first token of the reply, in milliseconds. */
  firstTokenMs?: number;
  /** Set when the rates are Hearth's measurement: the server gave none. */
  measured?: true;
}

export type LlmErrorKind = 'http' | 'network' | 'timeout' | 'aborted' | 'protocol' | 'context_overflow';

export interface LlmError {
  kind: LlmErrorKind;
  message: string;
  status?: number;
  /** `context_overflow`: the context window the server said it has, when its error named one. */
  contextWindow?: number;
}

/**
 * What one model request yields. The stream never throws: it ends with exactly one
 * `done` or `error` event.
 */
export type LlmEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'reasoning_delta'; text: string }
  /**
   * `text`, the answer text streamed so far by this request, was reasoning: the chat template had
   * opened it, and only its closer showed that. It is no answer; it follows as `reasoning_delta`.
   */
  | { type: 'text_retracted'; text: string }
  /** Output streamed so far by this request is void: the request is being retried. */
  | { type: 'retry'; attempt: number; delayMs: number; reason: string }
  | { type: 'warning'; message: string }
  | {
      type: 'done';
      /** Reasoning stripped; tool calls parsed from the text when the server gave none. */
      message: AssistantMessage;
      /** The reply's reasoning, from the server's reasoning fields or the text's reasoning markup. */
      reasoning: string;
      toolCalls: ToolCall[];
      finishReason: string;
      usage?: Usage;
    }
  | { type: 'error'; error: LlmError };

export function toWireToolCall(call: ToolCall): WireToolCall {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } };
}
