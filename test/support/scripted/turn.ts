/**
 * What a scripted server says, one turn per chat request: plain JSON-serialisable data (the shape
 * JSON script files for `npm run mock-llm` use), built in tests with `reply()...`.
 */

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

export type Usage = { prompt: number; completion: number };

/**
 * One scripted response. Fault fields combine: delayFirstByte and a hold at 0 apply before
 * httpError/reset/body; hang wins over everything.
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
  /** On the server's clock (real time unless the test injected one). */
  delayFirstByte?: number;
  delayBetweenChunks?: number;
  /**
   * Stop after this many streamed events (0: before the response starts; any value stops a
   * non-streamed response before it starts) until the test calls `server.release()`.
   */
  holdAfter?: number;
  hang?: boolean;
  reset?: boolean;
  /** Streamed only: one `data: {not json` event mid-stream. */
  malformedChunk?: boolean;
  /** Exact response body; split on blank lines so dropAfter and delayBetweenChunks still apply. */
  raw?: string;
  /**
   * Fields added to the reply's last chunk (a streamed reply's finishing chunk, a whole completion,
   * Ollama's `done` line), as servers add their figures there: llama.cpp's `timings`, LM Studio's
   * `stats`, Ollama's `prompt_eval_cached_count`.
   */
  finalFields?: Record<string, unknown>;
}

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
  /** Pause after `nEvents` until `server.release()`: lets a test act mid-stream without a timer race. */
  readonly holdAfter = (nEvents: number) => this.#set('holdAfter', nEvents);
  readonly hang = () => this.#set('hang', true);
  /** Destroy the connection (TCP RST) without sending a response. */
  readonly reset = () => this.#set('reset', true);
  readonly malformedChunk = () => this.#set('malformedChunk', true);
  readonly raw = (sseBodyText: string) => this.#set('raw', sseBodyText);
  readonly finalFields = (fields: Record<string, unknown>) =>
    this.#set('finalFields', { ...this.#turn.finalFields, ...fields });

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

export function toTurn(t: TurnInput): ScriptedTurn {
  // Duck-typed rather than instanceof: vitest and tsx may load this module twice.
  return t instanceof TurnBuilder || typeof (t as { build?: unknown }).build === 'function'
    ? (t as TurnBuilder).build()
    : structuredClone(t as ScriptedTurn);
}
