import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmClient, type LlmClient } from '../../src/llm/client.js';
import { createOllamaClient } from '../../src/llm/ollama.js';
import type { LlmEvent, ToolCall } from '../../src/llm/types.js';
import { type ExpectedCall, type FormatCase, TOOLS } from '../fixtures/tool-formats/cases.js';
import { FORMAT_CASES } from '../fixtures/tool-formats/index.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

/**
 * Every case of the conformance corpus (test/fixtures/tool-formats) through the real clients over
 * HTTP: as SSE with the content cut at random places (three different cuts), as one non-streamed
 * completion, and as Ollama's NDJSON. Each must give the expected answer, reasoning and calls, and
 * what streamed as the answer and as reasoning must be the answer and the reasoning: no markup
 * ever shows in either.
 */

let streaming: ScriptedServer;
let whole: ScriptedServer;
const completions: object[] = [];

beforeAll(async () => {
  streaming = await startScriptedServer();
  whole = await startScriptedServer({
    extraRoutes: { 'POST /v1/chat/completions': () => ({ json: completions.shift() }) },
  });
});
afterAll(async () => {
  await streaming.close();
  await whole.close();
});

/** A small seeded generator: the same cuts on every run, different ones per seed. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

function cut(text: string, seed: number): string[] {
  const next = random(seed);
  const pieces: string[] = [];
  for (let at = 0; at < text.length; ) {
    const size = 1 + Math.floor(next() * (seed % 2 === 0 ? 4 : 12));
    pieces.push(text.slice(at, at + size));
    at += size;
  }
  return pieces;
}

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

function sse(pieces: string[], finish: string): string {
  return [
    chunk({ role: 'assistant', content: '' }),
    ...pieces.map((content) => chunk({ content })),
    chunk({}, finish),
    `data: ${JSON.stringify({ id: 'c', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } })}\n\n`,
    'data: [DONE]\n\n',
  ].join('');
}

function ndjson(pieces: string[], finish: string): string {
  const line = (message: object, done = false) =>
    `${JSON.stringify({ model: 'm', message: { role: 'assistant', content: '', ...message }, done, ...(done ? { done_reason: finish } : {}) })}\n`;
  return [...pieces.map((content) => line({ content })), line({}, true)].join('');
}

function completion(content: string, finish: string): object {
  return {
    id: 'c',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finish }],
    usage: { prompt_tokens: 10, completion_tokens: 5 },
  };
}

type Mode = { kind: 'sse'; seed: number } | { kind: 'json' } | { kind: 'ollama'; seed: number };

function clientFor(test: FormatCase, mode: Mode): LlmClient {
  const model = test.model ?? 'local-model';
  const retry = { maxRetries: 0 };
  if (mode.kind === 'json') return createLlmClient({ baseUrl: whole.baseUrl, model, retry });
  if (mode.kind === 'ollama') return createOllamaClient({ baseUrl: streaming.baseUrl, model, retry });
  return createLlmClient({ baseUrl: streaming.baseUrl, model, retry });
}

function serve(mode: Mode, content: string, finish: string): void {
  if (mode.kind === 'json') completions.push(completion(content, finish));
  else if (mode.kind === 'ollama') streaming.push(reply().raw(ndjson(cut(content, mode.seed), finish)));
  else streaming.push(reply().raw(sse(cut(content, mode.seed), finish)));
}

async function ask(client: LlmClient): Promise<LlmEvent[]> {
  const events: LlmEvent[] = [];
  for await (const event of client.stream({ messages: [{ role: 'user', content: 'go' }], tools: TOOLS }))
    events.push(event);
  return events;
}

async function run(test: FormatCase, mode: Mode) {
  const client = clientFor(test, mode);
  if (test.warm) {
    // The first reply of such a model shows its template opens the reasoning; the client learns it.
    serve(mode, 'Let me see.</think>Ready.', 'stop');
    await ask(client);
  }
  serve(mode, test.input, test.finishReason ?? 'stop');
  return ask(client);
}

const norm = (s: string | null | undefined) => (s ?? '').replace(/\s+/g, ' ').trim();

function actual(call: ToolCall): ExpectedCall {
  if (call.problem)
    return { name: call.name, problem: /cut off/.test(call.problem) ? 'cut off' : 'unreadable' };
  return { name: call.name, arguments: JSON.parse(call.arguments) };
}

/** What a reader of the stream ends up with: a retraction takes back the answer text it names. */
function streamed(events: LlmEvent[]): { shown: string; thought: string } {
  let shown = '';
  let thought = '';
  for (const e of events) {
    if (e.type === 'text_delta') shown += e.text;
    if (e.type === 'reasoning_delta') thought += e.text;
    if (e.type === 'text_retracted') {
      expect(shown.endsWith(e.text), 'a retraction names the text streamed').toBe(true);
      shown = shown.slice(0, shown.length - e.text.length);
    }
  }
  return { shown, thought };
}

const MODES: Array<[string, Mode]> = [
  ['SSE, cut one way', { kind: 'sse', seed: 11 }],
  ['SSE, cut finer', { kind: 'sse', seed: 42 }],
  ['SSE, cut another way', { kind: 'sse', seed: 977 }],
  ['non-streamed', { kind: 'json' }],
  ['Ollama NDJSON', { kind: 'ollama', seed: 7 }],
];

describe.each(Object.entries(FORMAT_CASES))('conformance: %s', (_family, cases) => {
  describe.each(cases.map((c) => [c.name, c] as const))('%s', (_name, test) => {
    it.each(MODES)('%s', async (_label, mode) => {
      const events = await run(test, mode);
      const done = events.at(-1);
      if (done?.type !== 'done') throw new Error(`no done event: ${JSON.stringify(done)}`);
      expect(norm(done.message.content), `text (${test.source})`).toBe(norm(test.expect.text));
      expect(norm(done.reasoning), 'reasoning').toBe(norm(test.expect.reasoning));
      expect(done.toolCalls.map(actual), 'calls').toEqual(test.expect.calls ?? []);
      if (mode.kind !== 'json') {
        const { shown, thought } = streamed(events);
        expect(norm(shown), 'what streamed as the answer').toBe(norm(done.message.content));
        // A template guessed to open reasoning that did not: the answer streamed as reasoning first.
        const guessedWrong = done.reasoning === '' && norm(thought) === norm(done.message.content);
        if (!guessedWrong) expect(norm(thought), 'what streamed as reasoning').toBe(norm(done.reasoning));
      }
    });
  });
});

describe('the corpus', () => {
  it('holds at least 100 cases, each citing its source', () => {
    const all = Object.values(FORMAT_CASES).flat();
    expect(all.length).toBeGreaterThanOrEqual(100);
    for (const test of all) expect(test.source.length, test.name).toBeGreaterThan(10);
  });
});
