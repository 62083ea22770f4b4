import { afterEach, describe, expect, it } from 'vitest';
import { createLlmClient, type LlmClientOptions } from '../../src/llm/client.js';
import type { LlmEvent, ToolSchema } from '../../src/llm/types.js';
import { closedPort } from '../support/net.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';

const tools: ToolSchema[] = ['read_file', 'write_file'].map((name) => ({
  type: 'function',
  function: {
    name,
    description: name,
    parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } },
  },
}));

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function run(turns: TurnInput[], opts: Partial<LlmClientOptions> = {}, signal?: AbortSignal) {
  server = await startScriptedServer({ turns });
  const client = createLlmClient({
    baseUrl: server.baseUrl,
    model: 'scripted-model',
    retry: { baseDelayMs: 5, maxDelayMs: 5000 },
    ...opts,
  });
  const events: LlmEvent[] = [];
  for await (const e of client.stream({ messages: [{ role: 'user', content: 'hi' }], tools, signal }))
    events.push(e);
  const last = events.at(-1)!;
  const text = events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('');
  const reasoning = events.flatMap((e) => (e.type === 'reasoning_delta' ? [e.text] : [])).join('');
  return { events, last, text, reasoning, done: last.type === 'done' ? last : undefined };
}

describe('llm client over real HTTP', () => {
  it('streams text and reports usage', async () => {
    const r = await run([reply().text('Hello there, friend.').usage({ prompt: 11, completion: 5 })]);
    expect(r.text).toBe('Hello there, friend.');
    expect(r.events.filter((e) => e.type === 'text_delta').length).toBeGreaterThan(1);
    expect(r.done?.message).toEqual({ role: 'assistant', content: 'Hello there, friend.' });
    expect(r.done?.usage).toEqual({ prompt: 11, completion: 5 });
    const body = server!.requests[0]!.body;
    expect(body.stream).toBe(true);
    expect(body.model).toBe('scripted-model');
    expect(body.tools.map((t: ToolSchema) => t.function.name)).toEqual(['read_file', 'write_file']);
  });

  it('assembles parallel tool calls split across chunks, with and without ids', async () => {
    const r = await run([
      reply()
        .tool('read_file', { path: 'a/very/long/path/to/a/file.txt', offset: 10 })
        .tool('write_file', { path: 'b.txt', content: 'x'.repeat(50) }, { id: null })
        .tool('read_file', { path: 'c' }, { argsAsObject: true }),
    ]);
    const calls = r.done!.toolCalls;
    expect(calls.map((c) => c.name)).toEqual(['read_file', 'write_file', 'read_file']);
    expect(JSON.parse(calls[0]!.arguments)).toEqual({ path: 'a/very/long/path/to/a/file.txt', offset: 10 });
    expect(JSON.parse(calls[1]!.arguments)).toEqual({ path: 'b.txt', content: 'x'.repeat(50) });
    expect(JSON.parse(calls[2]!.arguments)).toEqual({ path: 'c' });
    expect(new Set(calls.map((c) => c.id)).size).toBe(3);
    expect(calls.every((c) => c.id.length > 0)).toBe(true);
    expect(r.done!.message.tool_calls).toHaveLength(3);
  });

  it.each([
    ['reasoning_content', reply().reasoning('step one, step two').text('Answer.')],
    ['reasoning field', reply().reasoningField('step one, step two').text('Answer.')],
    ['<think> tags', reply().think('step one, step two').text('Answer.')],
  ])('separates reasoning given as %s and keeps it out of the message', async (_label, turn) => {
    const r = await run([turn]);
    expect(r.reasoning).toBe('step one, step two');
    expect(r.text).toBe('Answer.');
    expect(r.done!.message.content).toBe('Answer.');
  });

  it('treats an unclosed leading <think> as reasoning', async () => {
    const r = await run([reply().text('<think>I am still pondering this')]);
    expect(r.reasoning).toBe('I am still pondering this');
    expect(r.done!.message.content).toBe('');
  });

  it.each([
    ['Hermes', '<tool_call>{"name": "read_file", "arguments": {"path": "x.md"}}</tool_call>'],
    [
      'Qwen3-Coder XML',
      '<tool_call>\n<function=read_file>\n<parameter=path>\nx.md\n</parameter>\n</function>\n</tool_call>',
    ],
    ['Mistral', '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "x.md"}}]'],
    ['bare JSON', '{"name": "read_file", "parameters": {"path": "x.md"}}'],
    ['fenced JSON', 'I will read it.\n```json\n{"name": "read_file", "arguments": {"path": "x.md"}}\n```'],
  ])('parses a %s tool call written in the text', async (_label, text) => {
    const r = await run([reply().text(text)]);
    expect(r.done!.toolCalls).toHaveLength(1);
    expect(r.done!.toolCalls[0]!.name).toBe('read_file');
    expect(JSON.parse(r.done!.toolCalls[0]!.arguments)).toEqual({ path: 'x.md' });
    expect(r.done!.message.tool_calls?.[0]?.function.name).toBe('read_file');
    expect(r.done!.message.content ?? '').not.toContain('read_file');
  });

  it('keeps Qwen3-Coder parameter text raw when the tool declares a string', async () => {
    const text =
      '<tool_call>\n<function=write_file>\n<parameter=path>\nn.json\n</parameter>\n<parameter=content>\n{"a": 1}\n</parameter>\n</function>\n</tool_call>';
    const r = await run([reply().text(text)]);
    expect(JSON.parse(r.done!.toolCalls[0]!.arguments)).toEqual({ path: 'n.json', content: '{"a": 1}' });
  });

  it('does not take prose that mentions JSON for a call', async () => {
    const text = 'Use a config like {"name": "demo", "arguments": {}} or {"debug": true}.';
    const r = await run([reply().text(text)]);
    expect(r.done!.toolCalls).toEqual([]);
    expect(r.done!.message.content).toBe(text);
  });

  it('waits for Retry-After on 429, then succeeds', async () => {
    const started = Date.now();
    const r = await run([reply().httpError(429, { retryAfter: 1 }), reply().text('ok')]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    const retry = r.events.find((e) => e.type === 'retry');
    expect(retry).toMatchObject({ type: 'retry', attempt: 1, delayMs: 1000 });
    expect(r.text).toBe('ok');
    expect(server!.requests).toHaveLength(2);
  });

  it('retries a 500 and a dropped stream', async () => {
    const r = await run([
      reply().httpError(500),
      reply().text('partial answer that drops').dropAfter(2),
      reply().text('whole'),
    ]);
    const retries = r.events.filter((e) => e.type === 'retry');
    expect(retries).toHaveLength(2);
    expect(retries[1]).toMatchObject({ reason: expect.stringContaining('mid-stream') });
    expect(r.done!.message.content).toBe('whole');
    expect(server!.requests).toHaveLength(3);
  });

  it('retries a connection reset', async () => {
    const r = await run([reply().reset(), reply().text('fine')]);
    expect(r.events.some((e) => e.type === 'retry')).toBe(true);
    expect(r.done!.message.content).toBe('fine');
  });

  it('gives up after max retries with a clear error', async () => {
    const r = await run([reply().httpError(503), reply().httpError(503)], {
      retry: { maxRetries: 1, baseDelayMs: 1 },
    });
    // The server answered, so it is running: the message says to look at its log, not whether it runs.
    expect(r.last).toMatchObject({ type: 'error', error: { kind: 'http', status: 503 } });
    expect(r.last.type === 'error' && r.last.error.message).toMatch(
      /Gave up after 2 attempts: 503.*server's log/,
    );
  });

  it('does not retry a 400 and passes the server message on', async () => {
    const r = await run([reply().httpError(400, { body: '{"error":{"message":"bad model name"}}' })]);
    expect(r.last).toMatchObject({ type: 'error', error: { kind: 'http', status: 400 } });
    expect(r.last.type === 'error' && r.last.error.message).toContain('bad model name');
    expect(server!.requests).toHaveLength(1);
  });

  it('recognises a context overflow error', async () => {
    const body = '{"error":{"message":"the request exceeds the available context size, try increasing it"}}';
    const r = await run([reply().httpError(400, { body })]);
    expect(r.last).toMatchObject({ type: 'error', error: { kind: 'context_overflow' } });
  });

  it('skips a malformed chunk with a warning and keeps the rest', async () => {
    const r = await run([reply().text('one two three four five').malformedChunk()]);
    expect(r.events.some((e) => e.type === 'warning')).toBe(true);
    expect(r.done!.message.content).toBe('one two three four five');
  });

  it('survives a slow first byte', async () => {
    const r = await run([reply().delayFirstByte(300).text('late')]);
    expect(r.done!.message.content).toBe('late');
  });

  it('times out a silent server with an idle timeout and says so', async () => {
    const r = await run([reply().hang()], { idleTimeoutMs: 200 });
    expect(r.last).toMatchObject({ type: 'error', error: { kind: 'timeout' } });
    expect(r.last.type === 'error' && r.last.error.message).toMatch(/sent nothing for 0s|sent nothing/);
  });

  it('aborts an in-flight request at once', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const started = Date.now();
    const r = await run([reply().hang()], {}, controller.signal);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(r.last).toMatchObject({ type: 'error', error: { kind: 'aborted' } });
  });

  it('reports a refused connection after retrying', async () => {
    const client = createLlmClient({
      baseUrl: `http://127.0.0.1:${await closedPort()}/v1`,
      model: 'm',
      retry: { maxRetries: 2, baseDelayMs: 1 },
    });
    const events: LlmEvent[] = [];
    for await (const e of client.stream({ messages: [{ role: 'user', content: 'x' }] })) events.push(e);
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({
      type: 'error',
      error: { message: expect.stringMatching(/connection refused/) },
    });
  });
});
