/**
 * What only the Ollama transport has: options in Ollama's shape, history converted to its message
 * format, and `num_ctx` from the session's window. The behaviour both transports share (streaming,
 * retries, abort, timeouts, errors) is in transport-contract.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createOllamaClient, type OllamaClientOptions } from '../../src/llm/ollama.js';
import type { ChatMessage, LlmEvent } from '../../src/llm/types.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';
import { fileToolSchemas } from '../support/tool-schemas.js';

const tools = fileToolSchemas;

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

/** A history in which the model read a file: one call and its result. */
function readOneFile(): ChatMessage[] {
  return [
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
}

async function run(turns: TurnInput[], opts: Partial<OllamaClientOptions> = {}) {
  return collect(await start(turns, opts));
}

describe('ollama client over real HTTP (native dialect)', () => {
  it('passes temperature and max tokens as Ollama options', async () => {
    await run([reply().text('ok')], { temperature: 0.2, maxTokens: 512, contextWindow: 4096 });
    expect(server!.requests[0]!.body.options).toEqual({ num_ctx: 4096, temperature: 0.2, num_predict: 512 });
  });

  it('converts history: tool calls get object arguments, results name their tool', async () => {
    const client = await start([reply().text('The file says hello.')]);
    const history = readOneFile();
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

describe('request bodies over a growing history', () => {
  it('extend the previous body byte for byte, and each tool result names its tool', async () => {
    const client = await start([reply().text('one'), reply().text('two')]);
    const history = readOneFile();
    await collect(client, history);
    history.push(
      {
        role: 'assistant',
        content: 'And b.',
        tool_calls: [
          { id: 'call_2', type: 'function', function: { name: 'grep', arguments: '{"pattern":"x"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_2', content: 'b.txt:1:x' },
    );
    await collect(client, history);
    const [first, second] = server!.requests.map((r) => r.raw);
    // Everything before the end of the first request's messages is sent again unchanged.
    const messagesEnd = first!.indexOf('],"tools"');
    expect(second!.slice(0, messagesEnd)).toBe(first!.slice(0, messagesEnd));
    expect(server!.requests[1]!.body.messages.slice(-1)).toEqual([
      { role: 'tool', content: 'b.txt:1:x', tool_name: 'grep', tool_call_id: 'call_2' },
    ]);
    expect(JSON.parse(second!)).toEqual({
      ...JSON.parse(first!),
      messages: server!.requests[1]!.body.messages,
    });
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
