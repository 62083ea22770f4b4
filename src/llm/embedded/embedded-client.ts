/**
 * An LlmClient that runs a GGUF model in this process through node-llama-cpp, so Hearth works
 * with no server. node-llama-cpp is installed by the user (~250 MB with its binaries; see
 * node-llama-cpp.ts): it is imported only when an embedded model is first used, and a missing
 * install becomes an `error` event saying how to add it. Like the HTTP transports, `stream` never
 * throws.
 *
 * Tool calls come from node-llama-cpp's grammar-constrained function calling (the model's chat
 * wrapper decides the call syntax; the grammar keeps names and arguments valid). A request with
 * `toolChoice: 'required'` is answered under a JSON-schema grammar that admits only a call.
 */
import type { ChatRequest, LlmClient } from '../client.js';
import type { LlmError, LlmEvent, ToolCall, ToolSchema } from '../types.js';
import { toWireToolCall } from '../types.js';
import { embeddedBaseUrl } from './connect.js';
import { argumentsText, toChatHistory, toFunctions, toGbnfSchema } from './history.js';
import {
  type Llama,
  type LlamaChat,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaModel,
  loadModelFile,
} from './node-llama-cpp.js';

export interface EmbeddedClientOptions {
  /** Absolute path of the .gguf file. */
  modelPath: string;
  /** Tokens of context; the model's trained context when unset. */
  contextWindow?: number;
  /** CPU threads; the physical cores (node-llama-cpp's cpuMathCores) when unset. */
  threads?: number;
  /** Force the CPU binary even where a GPU build would load. */
  cpuOnly?: boolean;
  temperature?: number;
  topP?: number;
  seed?: number;
  maxTokens?: number;
}

type Loaded = {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  sequence: LlamaContextSequence;
  chat: LlamaChat;
};

export interface EmbeddedClient extends LlmClient {
  /** Loads the library and the model now (otherwise the first request does); the context size. */
  load(): Promise<{ contextWindow: number } | { error: LlmError }>;
  /** Frees the model and its context. */
  close(): Promise<void>;
}

export function createEmbeddedClient(options: EmbeddedClientOptions): EmbeddedClient {
  let loading: Promise<Loaded | { error: LlmError }> | undefined;
  const load = () => {
    loading ??= loadModel(options);
    return loading;
  };
  let callCount = 0;

  return {
    model: options.modelPath,
    baseUrl: embeddedBaseUrl(options.modelPath),
    async load() {
      const loaded = await load();
      return 'error' in loaded ? loaded : { contextWindow: loaded.context.contextSize };
    },
    async close() {
      const loaded = loading && (await loading);
      if (loaded && !('error' in loaded)) await loaded.model.dispose();
      loading = undefined;
    },
    async *stream(request) {
      const loaded = await load();
      if ('error' in loaded) {
        yield { type: 'error', error: loaded.error };
        return;
      }
      try {
        yield* generate(loaded, request, options, () => `call_${++callCount}`);
      } catch (err) {
        if (request.signal?.aborted)
          yield { type: 'error', error: { kind: 'aborted', message: 'Request cancelled.' } };
        else yield { type: 'error', error: failure(err) };
      }
    },
  };
}

/**
 * node-llama-cpp shifts the context itself when a prompt does not fit; when even that fails the
 * prompt is too long for the window, which Hearth answers by compacting, as with a server's 400.
 */
function failure(err: unknown): LlmError {
  const message = (err as Error).message ?? String(err);
  const overflow = /context (shift|size)|fit(s)? (in )?the context/i.test(message);
  return {
    kind: overflow ? 'context_overflow' : 'protocol',
    message: `The embedded model failed: ${message}`,
  };
}

async function loadModel(options: EmbeddedClientOptions): Promise<Loaded | { error: LlmError }> {
  const loaded = await loadModelFile(options);
  if ('error' in loaded) {
    return { error: { kind: loaded.notInstalled ? 'network' : 'protocol', message: loaded.error } };
  }
  const { lib, llama, model, threads } = loaded;
  try {
    const context = await model.createContext({
      ...(options.contextWindow ? { contextSize: options.contextWindow } : {}),
      threads,
    });
    const sequence = context.getSequence();
    const chat = new lib.LlamaChat({ contextSequence: sequence });
    return { llama, model, context, sequence, chat };
  } catch (err) {
    await model.dispose();
    return {
      error: {
        kind: 'protocol',
        message: `Cannot make a context for ${options.modelPath}: ${(err as Error).message}`,
      },
    };
  }
}

/** Bridges node-llama-cpp's callbacks to the event stream: chunks queue until the generator takes them. */
async function* generate(
  loaded: Loaded,
  request: ChatRequest,
  options: EmbeddedClientOptions,
  nextId: () => string,
): AsyncGenerator<LlmEvent> {
  const queue: string[] = [];
  let wake: (() => void) | undefined;
  let completion = 0;
  const common = {
    signal: request.signal,
    stopOnAbortSignal: true,
    onTextChunk: (text: string) => {
      queue.push(text);
      wake?.();
    },
    onToken: (tokens: readonly unknown[]) => {
      completion += tokens.length;
    },
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(options.topP !== undefined ? { topP: options.topP } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
  };
  const history = toChatHistory(request.messages);
  const tools = request.tools ?? [];
  const forced = request.toolChoice === 'required' && tools.length > 0;
  const grammar = forced ? await loaded.llama.createGrammarForJsonSchema(callSchema(tools)) : undefined;
  let settled = false;
  const running = (
    grammar
      ? loaded.chat.generateResponse(history, { ...common, grammar })
      : loaded.chat.generateResponse(history, {
          ...common,
          ...(tools.length ? { functions: toFunctions(tools) } : {}),
        })
  ).finally(() => {
    settled = true;
    wake?.();
  });
  running.catch(() => {});
  while (!settled || queue.length) {
    if (queue.length) {
      const text = queue.splice(0).join('');
      // A forced call's JSON is the call, not words for the user.
      if (!forced) yield { type: 'text_delta', text };
      continue;
    }
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
    wake = undefined;
  }
  const result = await running;
  const stop = result.metadata.stopReason;
  if (stop === 'abort' || request.signal?.aborted) {
    yield { type: 'error', error: { kind: 'aborted', message: 'Request cancelled.' } };
    return;
  }
  let toolCalls: ToolCall[] = (result.functionCalls ?? []).map((call) => ({
    id: nextId(),
    name: call.functionName,
    arguments: argumentsText(call.params),
  }));
  let text = result.response;
  if (grammar) {
    toolCalls = [forcedCall(grammar, result.response, nextId())];
    text = '';
  }
  const prompt = Math.max(0, loaded.sequence.nextTokenIndex - completion);
  yield {
    type: 'done',
    message: {
      role: 'assistant',
      content: text || null,
      ...(toolCalls.length ? { tool_calls: toolCalls.map(toWireToolCall) } : {}),
    },
    reasoning: '',
    toolCalls,
    finishReason: toolCalls.length ? 'tool_calls' : stop === 'maxTokens' ? 'length' : 'stop',
    usage: { prompt, completion },
  };
}

/**
 * The call in a forced reply. The grammar keeps it valid while it is written, so only a cut-off
 * reply (max tokens) fails to parse: that call is kept with a `problem` the registry answers.
 */
function forcedCall(grammar: { parse(json: string): unknown }, reply: string, id: string): ToolCall {
  try {
    const parsed = grammar.parse(reply) as { name: string; arguments: unknown };
    return { id, name: parsed.name, arguments: argumentsText(parsed.arguments) };
  } catch {
    const name = /"name"\s*:\s*"([^"]*)"/.exec(reply)?.[1] ?? '';
    return {
      id,
      name,
      arguments: '{}',
      problem:
        'Your tool call was cut off by the output token limit before its arguments ended. Call it again with shorter arguments.',
    };
  }
}

/** The JSON a forced call must be: one of the offered tools' names with that tool's arguments. */
function callSchema(tools: ToolSchema[]): Record<string, unknown> {
  return {
    oneOf: tools.map((tool) => ({
      type: 'object',
      properties: { name: { const: tool.function.name }, arguments: toGbnfSchema(tool.function.parameters) },
    })),
  };
}
