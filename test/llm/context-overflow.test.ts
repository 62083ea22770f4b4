/**
 * A prompt longer than the server's real window, refused as each server refuses it (the bodies in
 * test/support/scripted/server-limits.ts cite their sources): both transports end with a
 * `context_overflow` error that carries the window the server named, when it named one, and a
 * message a person can read.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { LlmClient, LlmClientOptions } from '../../src/llm/client.js';
import { createLlmClient } from '../../src/llm/client.js';
import { CONTEXT_OVERFLOW, windowFromError } from '../../src/llm/context-overflow.js';
import { createOllamaClient } from '../../src/llm/ollama.js';
import type { LlmError } from '../../src/llm/types.js';
import {
  type OverflowServer,
  overflowAnswer,
  reply,
  type ScriptedServer,
  startScriptedServer,
} from '../support/scripted-server.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const LONG = 'word '.repeat(4000);

async function overflow(
  limit: OverflowServer,
  create: (o: LlmClientOptions) => LlmClient,
): Promise<LlmError | undefined> {
  server = await startScriptedServer({
    turns: [reply().text('never played')],
    contextLimit: { tokens: 2048, server: limit },
  });
  const client = create({ baseUrl: server.baseUrl, model: 'm', retry: { maxRetries: 0 } });
  let error: LlmError | undefined;
  for await (const e of client.stream({ messages: [{ role: 'user', content: LONG }] })) {
    if (e.type === 'error') error = e.error;
  }
  return error;
}

const transports = [
  { name: 'OpenAI-compatible', create: createLlmClient },
  { name: 'Ollama native', create: createOllamaClient },
] as const;

const cases: { server: OverflowServer; window: number | undefined; says: RegExp }[] = [
  { server: 'llamacpp', window: 2048, says: /exceeds the available context size \(2048 tokens\)/ },
  { server: 'vllm', window: 2048, says: /maximum context length is 2048 tokens/ },
  { server: 'ollama', window: undefined, says: /^400 .*: the prompt is longer than the context length/ },
  { server: 'ollama-llama-server', window: 2048, says: /^400 .*: request \(\d+ tokens\) exceeds/ },
  { server: 'lmstudio', window: 2048, says: /loaded with context length of only 2048 tokens/ },
];

describe.each(transports)('a prompt over the server window ($name)', ({ create }) => {
  it.each(cases)('is a context overflow naming the window $server said', async (c) => {
    const error = await overflow(c.server, create);
    expect(error).toMatchObject({ kind: 'context_overflow', status: 400 });
    expect(error?.contextWindow).toBe(c.window);
    expect(error?.message).toMatch(c.says);
    // Never the server's JSON for a person to read.
    expect(error?.message).not.toMatch(/[{}]/);
    expect(server!.played).toBe(0);
  });
});

describe('the window a context-exceeded error names', () => {
  it("reads vLLM's max_tokens variant and an error reported mid-stream", () => {
    // vllm/entrypoints/openai/serving_engine.py _validate_input, when max_tokens does not fit.
    const maxTokens =
      "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None";
    expect(windowFromError(JSON.stringify({ error: { message: maxTokens, code: 400 } }))).toBe(4096);
    // Newer vLLM: vllm/renderers/params.py TokenizeParams._token_len_check (VLLMValidationError, 400).
    const renderer =
      "This model's maximum context length is 8192 tokens. However, you requested 0 output tokens and your prompt contains at least 8193 input tokens, for a total of at least 8193 tokens. Please reduce the length of the input prompt or the number of requested output tokens.";
    expect(CONTEXT_OVERFLOW.test(renderer)).toBe(true);
    expect(
      windowFromError(JSON.stringify({ error: { message: renderer, type: 'BadRequestError', code: 400 } })),
    ).toBe(8192);
    // A llama.cpp error object sent as an SSE event instead of a chunk.
    const inStream = overflowAnswer('llamacpp', 9000, 8192, 'openai').json;
    expect(windowFromError(JSON.stringify((inStream as { error: unknown }).error))).toBe(8192);
  });

  it("reads LM Studio's n_keep wording", () => {
    // Gitlawb/openclaude#353: LM Studio at :1234 answering 400 to a prompt over a 4096 window.
    const nKeep =
      '{"error":"The number of tokens to keep from the initial prompt is greater than the context length (n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context length, or provide a shorter input."}';
    expect(CONTEXT_OVERFLOW.test(nKeep)).toBe(true);
    expect(windowFromError(nKeep)).toBe(4096);
  });

  it('names none for the older wordings that carry no number', () => {
    // llama.cpp before it put the numbers in its message, with none beside it; Ollama's older runner.
    expect(
      windowFromError(
        '{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"invalid_request_error"}}',
      ),
    ).toBeUndefined();
    expect(windowFromError('{"error":"the input length exceeds the context length"}')).toBeUndefined();
  });
});
