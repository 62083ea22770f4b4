/**
 * What only the Ollama transport has: options in Ollama's shape, history converted to its message
 * format, and `num_ctx` sized to the prompt. The behaviour both transports share (streaming,
 * retries, abort, timeouts, errors) is in transport-contract.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chooseNumCtx, createOllamaClient, type OllamaClientOptions } from '../../src/llm/ollama.js';
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
    retry: { maxRetries: 0 },
    ...opts,
  });
}

async function collect(
  client: ReturnType<typeof createOllamaClient>,
  messages: ChatMessage[] = [{ role: 'user', content: 'hi' }],
) {
  const events: LlmEvent[] = [];
  for await (const e of client.stream({ messages, tools })) events.push(e);
  const last = events.at(-1)!;
  return { events, done: last.type === 'done' ? last : undefined };
}

async function run(turns: TurnInput[], opts: Partial<OllamaClientOptions> = {}) {
  return collect(await start(turns, opts));
}

describe('ollama client over real HTTP (native dialect)', () => {
  it('passes temperature and max tokens as Ollama options', async () => {
    await run([reply().text('ok')], { temperature: 0.2, maxTokens: 512 });
    expect(server!.requests[0]!.body.options).toEqual({ num_ctx: 2048, temperature: 0.2, num_predict: 512 });
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
});

describe('num_ctx', () => {
  const long: ChatMessage[] = [{ role: 'user', content: 'lorem ipsum dolor sit amet '.repeat(4000) }];

  it('grows with a long prompt, in steps of 1024', async () => {
    const client = await start([reply().text('a'), reply().text('b')]);
    await collect(client);
    await collect(client, long);
    const [short, big = 0] = server!.requests.map((r) => r.body.options.num_ctx as number);
    expect(short).toBe(5120);
    expect(big).toBeGreaterThan(20_000 + 4096);
    expect(big % 1024).toBe(0);
  });

  it('is capped at the model maximum', async () => {
    const client = await start([reply().text('a')], { maxContextWindow: 16384 });
    await collect(client, long);
    expect(server!.requests[0]!.body.options.num_ctx).toBe(16384);
  });

  it('never shrinks within a client, so Ollama does not reload the model', async () => {
    const client = await start([reply().text('a'), reply().text('b')]);
    await collect(client, long);
    await collect(client);
    const [first, second] = server!.requests.map((r) => r.body.options.num_ctx as number);
    expect(second).toBe(first);
  });

  it('can be chosen by the caller', async () => {
    const seen: number[] = [];
    const client = await start([reply().text('a')], {
      numCtx: (tokens) => {
        seen.push(tokens);
        return 12288;
      },
    });
    await collect(client);
    expect(seen[0]).toBeGreaterThan(0);
    expect(server!.requests[0]!.body.options.num_ctx).toBe(12288);
  });

  it('chooseNumCtx: reply room, rounding, floor and cap', () => {
    expect(chooseNumCtx(100)).toBe(5120);
    expect(chooseNumCtx(100, { replyTokens: 256 })).toBe(2048);
    expect(chooseNumCtx(10_000, { replyTokens: 1000 })).toBe(11264);
    expect(chooseNumCtx(100_000, { maxContextWindow: 32768 })).toBe(32768);
    expect(chooseNumCtx(100, { replyTokens: 256, maxContextWindow: 1024 })).toBe(1024);
  });
});
