import { afterEach, describe, expect, it } from 'vitest';
import { createOllamaClient, type OllamaClientOptions } from '../../src/llm/ollama.js';
import type { ChatMessage, LlmEvent, ToolSchema } from '../../src/llm/types.js';
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

async function start(turns: TurnInput[], opts: Partial<OllamaClientOptions> = {}) {
  server = await startScriptedServer({ turns });
  return createOllamaClient({
    baseUrl: server.baseUrl,
    model: 'qwen2.5-coder:7b',
    retry: { baseDelayMs: 5, maxDelayMs: 5000 },
    ...opts,
  });
}

async function collect(
  client: ReturnType<typeof createOllamaClient>,
  messages: ChatMessage[] = [{ role: 'user', content: 'hi' }],
  signal?: AbortSignal,
) {
  const events: LlmEvent[] = [];
  for await (const e of client.stream({ messages, tools, signal })) events.push(e);
  const last = events.at(-1)!;
  const text = events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('');
  const reasoning = events.flatMap((e) => (e.type === 'reasoning_delta' ? [e.text] : [])).join('');
  return { events, last, text, reasoning, done: last.type === 'done' ? last : undefined };
}

async function run(turns: TurnInput[], opts: Partial<OllamaClientOptions> = {}, signal?: AbortSignal) {
  return collect(await start(turns, opts), undefined, signal);
}

describe('ollama client over real HTTP', () => {
  it('streams text from /api/chat at the server root and reports usage', async () => {
    const r = await run([reply().text('Hello there, friend.').usage({ prompt: 31, completion: 6 })], {
      contextWindow: 8192,
    });
    expect(r.text).toBe('Hello there, friend.');
    expect(r.events.filter((e) => e.type === 'text_delta').length).toBeGreaterThan(1);
    expect(r.done?.message).toEqual({ role: 'assistant', content: 'Hello there, friend.' });
    expect(r.done?.finishReason).toBe('stop');
    expect(r.done?.usage).toEqual({ prompt: 31, completion: 6 });
    const request = server!.requests[0]!;
    expect(request.path).toBe('/api/chat');
    expect(request.body).toMatchObject({ model: 'qwen2.5-coder:7b', stream: true });
    expect(request.body.tools.map((t: ToolSchema) => t.function.name)).toEqual(['read_file', 'write_file']);
    expect(request.body.options.num_ctx).toBe(8192);
  });

  it('passes temperature and max tokens as Ollama options', async () => {
    await run([reply().text('ok')], { temperature: 0.2, maxTokens: 512, contextWindow: 4096 });
    expect(server!.requests[0]!.body.options).toEqual({ num_ctx: 4096, temperature: 0.2, num_predict: 512 });
  });

  it('turns message.thinking into reasoning and keeps it out of the message', async () => {
    const r = await run([reply().think('step one, step two').text('Answer.')]);
    expect(r.reasoning).toBe('step one, step two');
    expect(r.text).toBe('Answer.');
    expect(r.done!.message.content).toBe('Answer.');
  });

  it('separates <think> tags written in the content', async () => {
    const r = await run([reply().text('<think>pondering</think>Answer.')]);
    expect(r.reasoning).toBe('pondering');
    expect(r.done!.message.content).toBe('Answer.');
  });

  it('stringifies native tool calls with object arguments and gives each a unique id', async () => {
    const r = await run([
      reply()
        .tool('read_file', { path: 'a/very/long/path/to/a/file.txt', offset: 10 })
        .tool('write_file', { path: 'b.txt', content: 'x'.repeat(50) })
        .tool('read_file', { path: 'c' }, { id: 'call_from_server' }),
    ]);
    const calls = r.done!.toolCalls;
    expect(calls.map((c) => c.name)).toEqual(['read_file', 'write_file', 'read_file']);
    expect(JSON.parse(calls[0]!.arguments)).toEqual({ path: 'a/very/long/path/to/a/file.txt', offset: 10 });
    expect(JSON.parse(calls[1]!.arguments)).toEqual({ path: 'b.txt', content: 'x'.repeat(50) });
    expect(calls[2]!.id).toBe('call_from_server');
    expect(new Set(calls.map((c) => c.id)).size).toBe(3);
    expect(calls.every((c) => c.id.length > 0)).toBe(true);
    expect(r.done!.finishReason).toBe('tool_calls');
    expect(r.done!.message.tool_calls).toHaveLength(3);
    expect(r.done!.message.content).toBeNull();
  });

  it('synthesizes ids that differ between replies', async () => {
    const client = await start([
      reply().tool('read_file', { path: 'a' }),
      reply().tool('read_file', { path: 'a' }),
    ]);
    const first = await collect(client);
    const second = await collect(client);
    expect(first.done!.toolCalls[0]!.id).not.toBe(second.done!.toolCalls[0]!.id);
  });

  it('parses a tool call written in the text when the server gave none', async () => {
    const r = await run([
      reply().text('<tool_call>{"name": "read_file", "arguments": {"path": "x.md"}}</tool_call>'),
    ]);
    expect(r.done!.toolCalls).toHaveLength(1);
    expect(r.done!.toolCalls[0]!.name).toBe('read_file');
    expect(JSON.parse(r.done!.toolCalls[0]!.arguments)).toEqual({ path: 'x.md' });
    expect(r.done!.message.content ?? '').not.toContain('read_file');
  });

  it('converts history: tool calls get object arguments, results name their tool', async () => {
    const client = await start([reply().text('The file says hello.')]);
    const history: ChatMessage[] = [
      { role: 'system', content: 'You are Hearth.' },
      { role: 'user', content: 'Read a.txt' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '1\thello' },
    ];
    const r = await collect(client, history);
    expect(r.done!.message.content).toBe('The file says hello.');
    expect(server!.requests[0]!.body.messages).toEqual([
      { role: 'system', content: 'You are Hearth.' },
      { role: 'user', content: 'Read a.txt' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'call_1', function: { name: 'read_file', arguments: { path: 'a.txt' } } }],
      },
      { role: 'tool', content: '1\thello', tool_name: 'read_file', tool_call_id: 'call_1' },
    ]);
  });

  it('sends broken arguments from history as an empty object rather than be rejected', async () => {
    const client = await start([reply().text('ok')]);
    await collect(client, [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'read_file', arguments: '{"path": ' } }],
      },
      { role: 'tool', tool_call_id: 'c', content: 'error: bad arguments' },
    ]);
    expect(server!.requests[0]!.body.messages[1].tool_calls[0].function.arguments).toEqual({});
  });

  it('retries a 500 and a stream that ends without its done line', async () => {
    const r = await run([
      reply().httpError(500),
      reply().text('partial answer that drops').dropAfter(2),
      reply().text('whole'),
    ]);
    const retries = r.events.filter((e) => e.type === 'retry');
    expect(retries).toHaveLength(2);
    expect(retries[0]).toMatchObject({ reason: expect.stringContaining('scripted HTTP 500') });
    expect(r.done!.message.content).toBe('whole');
    expect(server!.requests).toHaveLength(3);
  });

  it("does not retry a missing model and passes Ollama's message on", async () => {
    const body = JSON.stringify({ error: "model 'qwen2.5-coder:7b' not found, try pulling it first" });
    const r = await run([reply().httpError(404, { body })]);
    expect(r.last).toMatchObject({ type: 'error', error: { kind: 'http', status: 404 } });
    expect(r.last.type === 'error' && r.last.error.message).toContain('try pulling it first');
    expect(server!.requests).toHaveLength(1);
  });

  it('ends with an error when the server reports one mid-stream', async () => {
    const line = (content: string) =>
      `${JSON.stringify({ message: { role: 'assistant', content }, done: false })}\n`;
    const r = await run([reply().raw(`${line('Hel')}{"error":"llama runner process has terminated"}\n`)]);
    expect(r.text).toBe('Hel');
    expect(r.last).toMatchObject({
      type: 'error',
      error: { kind: 'http', message: expect.stringContaining('runner process has terminated') },
    });
  });

  it('skips a malformed line with a warning', async () => {
    const r = await run([reply().text('one two three four five').malformedChunk()]);
    expect(r.events.some((e) => e.type === 'warning')).toBe(true);
    expect(r.done!.message.content).toBe('one two three four five');
  });

  it('aborts an in-flight request at once', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const started = Date.now();
    const r = await run([reply().hang()], {}, controller.signal);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(r.last).toMatchObject({ type: 'error', error: { kind: 'aborted' } });
  });

  it('times out a silent server', async () => {
    const r = await run([reply().hang()], { idleTimeoutMs: 200 });
    expect(r.last).toMatchObject({ type: 'error', error: { kind: 'timeout' } });
  });
});

describe('num_ctx', () => {
  const long: ChatMessage[] = [{ role: 'user', content: 'lorem ipsum dolor sit amet '.repeat(4000) }];

  it("is the session's window on every request, whatever the prompt's size", async () => {
    const client = await start([reply().text('a'), reply().text('b'), reply().text('c')], {
      contextWindow: 12288,
    });
    await collect(client);
    await collect(client, long);
    await client.stream({ messages: [{ role: 'user', content: 'summarize' }] }).next();
    await server!.waitForRequests(3);
    expect(server!.requests.map((r) => r.body.options.num_ctx)).toEqual([12288, 12288, 12288]);
  });

  it("is left to the server's own setting when no window was given", async () => {
    await run([reply().text('a')]);
    expect(server!.requests[0]!.body.options).not.toHaveProperty('num_ctx');
  });
});
