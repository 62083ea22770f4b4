/**
 * The contract every model transport keeps, run against each one over real HTTP: the same
 * scripted turns, rendered by the scripted server in the transport's own dialect, must give the
 * same events. Timeouts and backoff run on a ManualClock, fired by the test at the moment it
 * chooses, so no case depends on how fast the machine is. What only one dialect has (OpenAI's
 * in-text call formats, Ollama's history conversion and num_ctx) stays in client.test.ts and
 * ollama.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLlmClient, type LlmClient, type LlmClientOptions } from '../../src/llm/client.js';
import { createOllamaClient } from '../../src/llm/ollama.js';
import type { LlmEvent, ToolSchema } from '../../src/llm/types.js';
import { ManualClock } from '../support/manual-clock.js';
import { closedPort } from '../support/net.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';
import { fileToolSchemas } from '../support/tool-schemas.js';
import { waitUntil } from '../support/wait.js';

interface Transport {
  name: string;
  /** The route the transport posts to. */
  path: string;
  create(options: LlmClientOptions): LlmClient;
  /** A raw response body: `text` streamed, then the server's error object in the stream. */
  errorMidStream(text: string, message: string): string;
  /** A raw response body: `text` as the whole reply, in this many events (the last one ends it). */
  wholeReply(text: string): { body: string; events: number };
}

const transports: Transport[] = [
  {
    name: 'OpenAI-compatible (/v1/chat/completions, SSE)',
    path: '/v1/chat/completions',
    create: createLlmClient,
    errorMidStream: (text, message) =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n` +
      `data: ${JSON.stringify({ error: { message } })}\n\n`,
    wholeReply: (text) => ({
      body:
        `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text }, finish_reason: 'stop' }] })}\n\n` +
        'data: [DONE]\n\n',
      events: 2,
    }),
  },
  {
    name: 'Ollama native (/api/chat, NDJSON)',
    path: '/api/chat',
    create: createOllamaClient,
    errorMidStream: (text, message) =>
      `${JSON.stringify({ message: { role: 'assistant', content: text }, done: false })}\n` +
      `${JSON.stringify({ error: message })}\n`,
    wholeReply: (text) => ({
      body: `${JSON.stringify({ message: { role: 'assistant', content: text }, done: true, done_reason: 'stop' })}\n`,
      events: 1,
    }),
  },
];

const tools = fileToolSchemas;

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Collected {
  events: LlmEvent[];
  last: LlmEvent;
  text: string;
  reasoning: string;
  done?: Extract<LlmEvent, { type: 'done' }>;
  error?: Extract<LlmEvent, { type: 'error' }>['error'];
}

interface StreamControl {
  signal?: AbortSignal;
  /** Called for each event as it arrives, before the next is read. */
  onEvent?: (event: LlmEvent) => void;
  /** Let each announced backoff elapse on the clock at once (default); off to drive it by hand. */
  skipBackoff?: boolean;
}

async function collect(
  client: LlmClient,
  clock: ManualClock,
  control: StreamControl = {},
): Promise<Collected> {
  const events: LlmEvent[] = [];
  const stream = client.stream({
    messages: [{ role: 'user', content: 'hi' }],
    tools,
    signal: control.signal,
  });
  for await (const event of stream) {
    events.push(event);
    control.onEvent?.(event);
    // The backoff timer is set once the loop asks for the next event, so wait for it, then fire it.
    if (event.type === 'retry' && control.skipBackoff !== false) void clock.elapse(event.delayMs);
  }
  const last = events.at(-1)!;
  return {
    events,
    last,
    text: events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join(''),
    reasoning: events.flatMap((e) => (e.type === 'reasoning_delta' ? [e.text] : [])).join(''),
    done: last.type === 'done' ? last : undefined,
    error: last.type === 'error' ? last.error : undefined,
  };
}

describe.each(transports)('transport contract: $name', (transport) => {
  let clock: ManualClock;
  beforeEach(() => {
    clock = new ManualClock();
  });

  async function client(turns: TurnInput[], opts: Partial<LlmClientOptions> = {}): Promise<LlmClient> {
    server = await startScriptedServer({ turns, clock });
    return transport.create({ baseUrl: server.baseUrl, model: 'scripted-model', clock, ...opts });
  }

  async function run(turns: TurnInput[], opts: Partial<LlmClientOptions> = {}, control: StreamControl = {}) {
    return collect(await client(turns, opts), clock, control);
  }

  describe('replies', () => {
    it('streams text in pieces, reports usage and posts to its route', async () => {
      const r = await run([reply().text('Hello there, friend.').usage({ prompt: 11, completion: 5 })]);
      expect(r.text).toBe('Hello there, friend.');
      expect(r.events.filter((e) => e.type === 'text_delta').length).toBeGreaterThan(1);
      expect(r.done).toMatchObject({
        message: { role: 'assistant', content: 'Hello there, friend.' },
        toolCalls: [],
        finishReason: 'stop',
        usage: { prompt: 11, completion: 5 },
      });
      const request = server!.requests[0]!;
      expect(request.path).toBe(transport.path);
      expect(request.body).toMatchObject({ model: 'scripted-model', stream: true });
      expect(request.body.tools.map((t: ToolSchema) => t.function.name)).toEqual(['read_file', 'write_file']);
    });

    it('assembles parallel tool calls, keeping server ids and making the missing ones unique', async () => {
      const r = await run([
        reply()
          .tool('read_file', { path: 'a/very/long/path/to/a/file.txt', offset: 10 }, { id: null })
          .tool('write_file', { path: 'b.txt', content: 'x'.repeat(50) }, { id: null })
          .tool('read_file', { path: 'c' }, { id: 'call_from_server', argsAsObject: true }),
      ]);
      const calls = r.done!.toolCalls;
      expect(calls.map((c) => c.name)).toEqual(['read_file', 'write_file', 'read_file']);
      expect(JSON.parse(calls[0]!.arguments)).toEqual({ path: 'a/very/long/path/to/a/file.txt', offset: 10 });
      expect(JSON.parse(calls[1]!.arguments)).toEqual({ path: 'b.txt', content: 'x'.repeat(50) });
      expect(JSON.parse(calls[2]!.arguments)).toEqual({ path: 'c' });
      expect(calls[2]!.id).toBe('call_from_server');
      expect(new Set(calls.map((c) => c.id)).size).toBe(3);
      expect(calls.every((c) => c.id.length > 0)).toBe(true);
      expect(r.done!.finishReason).toBe('tool_calls');
      expect(r.done!.message.tool_calls).toHaveLength(3);
      expect(r.done!.message.content).toBeNull();
    });

    it('makes ids that differ between replies when the server sends none', async () => {
      const llm = await client([
        reply().tool('read_file', { path: 'a' }, { id: null }),
        reply().tool('read_file', { path: 'a' }, { id: null }),
      ]);
      const first = await collect(llm, clock);
      const second = await collect(llm, clock);
      expect(first.done!.toolCalls[0]!.id).not.toBe(second.done!.toolCalls[0]!.id);
    });

    it.each([
      ['a reasoning field', reply().reasoning('step one, step two').text('Answer.')],
      ['<think> parts', reply().think('step one, step two').text('Answer.')],
      ['<think> tags in the text', reply().text('<think>step one, step two</think>Answer.')],
    ])('separates reasoning given as %s and keeps it out of the message', async (_label, turn) => {
      const r = await run([turn]);
      expect(r.reasoning).toBe('step one, step two');
      expect(r.text).toBe('Answer.');
      expect(r.done!.message.content).toBe('Answer.');
    });

    it('reads a tool call written in the text when the server gave none', async () => {
      const r = await run([
        reply().text('<tool_call>{"name": "read_file", "arguments": {"path": "x.md"}}</tool_call>'),
      ]);
      expect(r.done!.toolCalls).toHaveLength(1);
      expect(r.done!.toolCalls[0]!.name).toBe('read_file');
      expect(JSON.parse(r.done!.toolCalls[0]!.arguments)).toEqual({ path: 'x.md' });
      expect(r.done!.message.content ?? '').not.toContain('read_file');
    });

    it('does not send tools to a model without native tool calling, and reads calls from the text', async () => {
      const r = await run(
        [reply().text('<tool_call>{"name": "read_file", "arguments": {"path": "x.md"}}</tool_call>')],
        { nativeTools: false },
      );
      expect(server!.requests[0]!.body.tools).toBeUndefined();
      expect(r.done!.toolCalls.map((c) => c.name)).toEqual(['read_file']);
    });

    it('skips a malformed chunk with a warning and keeps the rest', async () => {
      const r = await run([reply().text('one two three four five').malformedChunk()]);
      expect(r.events.filter((e) => e.type === 'warning')).toHaveLength(1);
      expect(r.done!.message.content).toBe('one two three four five');
    });
  });

  describe('retries', () => {
    it('waits exactly the Retry-After of a 429 before the next attempt', async () => {
      const llm = await client([reply().httpError(429, { retryAfter: 7 }), reply().text('ok')]);
      const running = collect(llm, clock, { skipBackoff: false });
      await clock.nextTimer(7000);
      expect(server!.requests).toHaveLength(1);
      clock.advance(7000);
      const r = await running;
      expect(r.events.filter((e) => e.type === 'retry')).toEqual([
        { type: 'retry', attempt: 1, delayMs: 7000, reason: expect.stringContaining('429') },
      ]);
      expect(r.done!.message.content).toBe('ok');
      expect(server!.requests).toHaveLength(2);
    });

    it('retries a 5xx, a stream cut short and a reset connection, then succeeds', async () => {
      const r = await run([
        reply().httpError(500),
        reply().text('partial answer that drops').dropAfter(2),
        reply().reset(),
        reply().text('whole'),
      ]);
      const retries = r.events.filter((e) => e.type === 'retry');
      expect(retries.map((e) => e.attempt)).toEqual([1, 2, 3]);
      expect(retries[0]).toMatchObject({ reason: expect.stringContaining('scripted HTTP 500') });
      expect(retries[2]).toMatchObject({ reason: expect.stringContaining('connection reset') });
      expect(r.done!.message.content).toBe('whole');
      expect(server!.requests).toHaveLength(4);
    });

    it('backs off exponentially with jitter when the server names no wait', async () => {
      const r = await run(
        [reply().httpError(503), reply().httpError(503), reply().httpError(503), reply().text('ok')],
        { retry: { baseDelayMs: 1000, maxDelayMs: 60_000 } },
      );
      const delays = r.events.flatMap((e) => (e.type === 'retry' ? [e.delayMs] : []));
      expect(delays).toHaveLength(3);
      delays.forEach((ms, n) => {
        expect(ms).toBeGreaterThanOrEqual(1000 * 2 ** n * 0.5);
        expect(ms).toBeLessThanOrEqual(1000 * 2 ** n);
      });
    });

    it('gives up after the last retry, saying the server is up but failing', async () => {
      const r = await run([reply().httpError(503), reply().httpError(503)], { retry: { maxRetries: 1 } });
      expect(r.error).toMatchObject({
        kind: 'http',
        status: 503,
        message: expect.stringMatching(/Gave up after 2 attempts: 503.*server is up but keeps failing/),
      });
    });

    it('reports a refused connection after retrying', async () => {
      const llm = transport.create({
        baseUrl: `http://127.0.0.1:${await closedPort()}/v1`,
        model: 'm',
        clock,
        retry: { maxRetries: 2 },
      });
      const r = await collect(llm, clock);
      expect(r.events.filter((e) => e.type === 'retry')).toHaveLength(2);
      expect(r.error).toMatchObject({
        kind: 'network',
        message: expect.stringMatching(/connection refused.*Is the model server at .* running\?/),
      });
    });
  });

  describe('errors', () => {
    it('does not retry a 4xx and passes the server message on', async () => {
      const r = await run([
        reply().httpError(404, { body: '{"error":"model not found, try pulling it first"}' }),
      ]);
      expect(r.error).toMatchObject({
        kind: 'http',
        status: 404,
        message: expect.stringContaining('try pulling'),
      });
      expect(server!.requests).toHaveLength(1);
    });

    it('recognises a context overflow', async () => {
      const body =
        '{"error":{"message":"the request exceeds the available context size, try increasing it"}}';
      const r = await run([reply().httpError(400, { body })]);
      expect(r.error).toMatchObject({ kind: 'context_overflow', status: 400 });
    });

    it('ends with an error the server reports mid-stream, after the text before it', async () => {
      const r = await run([
        reply().raw(transport.errorMidStream('Hel', 'llama runner process has terminated')),
      ]);
      expect(r.text).toBe('Hel');
      expect(r.error).toMatchObject({
        kind: 'http',
        message: expect.stringContaining('runner process has terminated'),
      });
    });
  });

  describe('abort', () => {
    it('aborts a request the server has not answered, and closes the connection', async () => {
      const llm = await client([reply().hang()]);
      const controller = new AbortController();
      const running = collect(llm, clock, { signal: controller.signal });
      await server!.waitForRequests(1);
      controller.abort();
      expect((await running).error).toEqual({ kind: 'aborted', message: 'Request cancelled.' });
      await server!.waitForDisconnects(1);
    });

    it('aborts mid-stream, keeping what was streamed', async () => {
      const controller = new AbortController();
      const r = await run(
        [reply().text('Half of it, then the rest').chunkSize(4).holdAfter(3)],
        {},
        {
          signal: controller.signal,
          onEvent: (e) => e.type === 'text_delta' && controller.abort(),
        },
      );
      expect(r.error).toMatchObject({ kind: 'aborted' });
      expect(r.text.length).toBeGreaterThan(0);
      expect('Half of it, then the rest'.startsWith(r.text)).toBe(true);
      await server!.waitForDisconnects(1);
    });

    it('aborts while waiting to retry, without another attempt', async () => {
      const controller = new AbortController();
      const r = await run(
        [reply().httpError(500), reply().text('never')],
        {},
        {
          signal: controller.signal,
          skipBackoff: false,
          onEvent: (e) => e.type === 'retry' && controller.abort(),
        },
      );
      expect(r.error).toMatchObject({ kind: 'aborted' });
      expect(server!.requests).toHaveLength(1);
      expect(clock.pending).toEqual([]);
    });
  });

  describe('connections', () => {
    it('keeps the connection of a reply read to its last event for the next request', async () => {
      const whole = transport.wholeReply('first');
      const llm = await client([reply().raw(whole.body).holdAfter(whole.events), reply().text('second')]);
      expect((await collect(llm, clock)).done?.message.content).toBe('first');
      // The end of the body is still to come: the connection waits for it rather than being cut.
      await server!.waitForHolds(1);
      server!.release();
      await waitUntil(() => clock.pending.length === 0, 'the first reply to end');
      expect((await collect(llm, clock)).done?.message.content).toBe('second');
      expect(server!.connections).toBe(1);
    });

    it('cuts a connection the server keeps open after the last event, once a second has passed', async () => {
      const whole = transport.wholeReply('all of it');
      const r = await run([reply().raw(whole.body).holdAfter(whole.events)]);
      expect(r.done?.message.content).toBe('all of it');
      await server!.waitForHolds(1);
      expect(clock.pending).toEqual([1000]);
      clock.advance(1000);
      await server!.waitForDisconnects(1);
    });
  });

  describe('timeouts', () => {
    it('waits for a first byte past the idle timeout: the server is still reading the prompt', async () => {
      const llm = await client([reply().delayFirstByte(240_000).text('late')], {
        idleTimeoutMs: 180_000,
        firstByteTimeoutMs: 300_000,
      });
      const running = collect(llm, clock);
      await server!.waitForRequests(1);
      await clock.elapse(240_000);
      expect((await running).done!.message.content).toBe('late');
    });

    it('gives up on a first byte that takes longer than its own limit, and says why', async () => {
      const llm = await client([reply().hang()], { idleTimeoutMs: 30_000, firstByteTimeoutMs: 90_000 });
      const running = collect(llm, clock);
      await server!.waitForRequests(1);
      clock.advance(60_000);
      clock.advance(30_000);
      const r = await running;
      expect(r.error).toMatchObject({
        kind: 'timeout',
        message: expect.stringMatching(
          /no reply within 90s; it may still be reading a long prompt.*first_byte_timeout/,
        ),
      });
      expect(server!.requests).toHaveLength(1);
    });

    it('waits for the first byte as long as the whole-request limit when no first-byte limit is set', async () => {
      const llm = await client([reply().hang()], { timeoutMs: 600_000, idleTimeoutMs: 180_000 });
      const running = collect(llm, clock);
      await server!.waitForRequests(1);
      clock.advance(180_000);
      expect(clock.pending.length).toBeGreaterThan(0);
      clock.advance(420_000);
      const r = await running;
      expect(r.error).toMatchObject({ kind: 'timeout' });
      expect(r.error!.message).not.toMatch(/sent nothing for 180s/);
    });

    it('gives up on a stream that stalls in the middle of a reply', async () => {
      const r = await run(
        [reply().text('abcdefgh').chunkSize(2).holdAfter(3)],
        { idleTimeoutMs: 30_000 },
        {
          onEvent: (e) => e.type === 'text_delta' && clock.advance(30_000),
        },
      );
      expect(r.error).toMatchObject({
        kind: 'timeout',
        message: expect.stringContaining('sent nothing for 30s in the middle of a reply'),
      });
    });

    it('gives up when the whole request takes longer than its limit', async () => {
      const llm = await client([reply().hang()], {
        timeoutMs: 60_000,
        idleTimeoutMs: 180_000,
        firstByteTimeoutMs: 180_000,
      });
      const running = collect(llm, clock);
      await server!.waitForRequests(1);
      clock.advance(60_000);
      const r = await running;
      expect(r.error).toMatchObject({
        kind: 'timeout',
        message: expect.stringMatching(/did not finish within 60s/),
      });
    });
  });
});
