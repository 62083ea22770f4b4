/**
 * The reasoning setting (`reasoning` in the config, `--thinking`, `/thinking`) reaches each server in
 * the fields it understands, as the scripted server records them; a change between two requests
 * touches only the request's tail (the messages, the prompt cache's part, stay as they were); what
 * the server or model cannot do is said once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, configSchema } from '../../src/config/schema.js';
import { type Connection, createClient } from '../../src/llm/connection.js';
import type { ServerKind } from '../../src/llm/discover.js';
import type { EmbeddedClient } from '../../src/llm/embedded/embedded-client.js';
import type { ChatMessage, LlmEvent } from '../../src/llm/types.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setUp(kind: ServerKind, model: string, turns: TurnInput[], reasoning?: Config['reasoning']) {
  server = await startScriptedServer({ turns });
  const settings = configSchema.parse({ base_url: server.baseUrl, model, max_retries: 0, reasoning });
  const connection: Connection = {
    baseUrl: server.baseUrl,
    model,
    origin: 'configured',
    kind,
    info: { kind, source: 'test' },
    contextWindow: 8192,
    contextSource: 'test',
    nativeTools: true,
  };
  return { settings, llm: createClient(connection, settings) };
}

async function ask(llm: ReturnType<typeof createClient>, messages: ChatMessage[]): Promise<LlmEvent[]> {
  const events: LlmEvent[] = [];
  for await (const event of llm.stream({ messages })) events.push(event);
  return events;
}

const warnings = (events: LlmEvent[]) => events.flatMap((e) => (e.type === 'warning' ? [e.message] : []));
const first: ChatMessage[] = [{ role: 'user', content: 'hi' }];
const second: ChatMessage[] = [
  ...first,
  { role: 'assistant', content: 'ok' },
  { role: 'user', content: 'more' },
];

/** The request's fields beyond the ones every request has. */
function reasoningPart(body: Record<string, unknown>) {
  const { chat_template_kwargs, reasoning_effort, think } = body;
  return JSON.parse(JSON.stringify({ chat_template_kwargs, reasoning_effort, think }));
}

describe.each([
  {
    kind: 'llamacpp' as const,
    off: { chat_template_kwargs: { enable_thinking: false } },
    high: { chat_template_kwargs: { enable_thinking: true, reasoning_effort: 'high' } },
  },
  {
    kind: 'vllm' as const,
    off: { chat_template_kwargs: { enable_thinking: false, thinking: false } },
    high: { chat_template_kwargs: { enable_thinking: true, thinking: true }, reasoning_effort: 'high' },
  },
  // mlx_lm.server's chat_template_kwargs (mlx_lm/server.py); oMLX and mlx-openai-server take the same.
  {
    kind: 'mlx-lm' as const,
    off: { chat_template_kwargs: { enable_thinking: false } },
    high: { chat_template_kwargs: { enable_thinking: true } },
  },
  { kind: 'lmstudio' as const, off: { reasoning_effort: 'none' }, high: { reasoning_effort: 'high' } },
  // Ollama's /v1 and any other OpenAI-compatible server.
  {
    kind: 'openai-compatible' as const,
    off: { reasoning_effort: 'none' },
    high: { reasoning_effort: 'high' },
  },
])('$kind', ({ kind, off, high }) => {
  it('sends thinking off, then an effort once /thinking changes it, with the messages as they were', async () => {
    const { settings, llm } = await setUp(
      kind,
      'qwen3-8b',
      [reply().text('ok'), reply().text('done')],
      'off',
    );
    expect(warnings(await ask(llm, first))).toEqual([]);
    settings.reasoning = 'high';
    await ask(llm, second);
    const [a, b] = server!.requests.map((r) => r.body as Record<string, unknown>);
    expect(reasoningPart(a!)).toEqual(off);
    expect(reasoningPart(b!)).toEqual(high);
    expect(JSON.stringify(b!.messages)).toContain(JSON.stringify(a!.messages).slice(1, -1));
  });
});

describe('Ollama /api/chat', () => {
  it('sends think as a boolean, and says once that an effort is only on', async () => {
    const { settings, llm } = await setUp(
      'ollama',
      'qwen3:8b',
      [reply().text('a'), reply().text('b')],
      'off',
    );
    await ask(llm, first);
    settings.reasoning = 'high';
    const events = [...(await ask(llm, second))];
    expect(server!.requests.map((r) => r.path)).toEqual(['/api/chat', '/api/chat']);
    expect(server!.requests.map((r) => (r.body as { think?: unknown }).think)).toEqual([false, true]);
    expect(warnings(events)).toEqual([
      'Ollama takes thinking on or off for qwen3:8b, not an effort: it is on.',
    ]);
  });

  it('sends gpt-oss its level, and low when asked for off, which it cannot do (said once)', async () => {
    const turns = [reply().text('a'), reply().text('b'), reply().text('c')];
    const { settings, llm } = await setUp('ollama', 'gpt-oss:20b', turns, 'medium');
    await ask(llm, first);
    settings.reasoning = 'off';
    const said = [...warnings(await ask(llm, second)), ...warnings(await ask(llm, second))];
    expect(server!.requests.map((r) => (r.body as { think?: unknown }).think)).toEqual([
      'medium',
      'low',
      'low',
    ]);
    expect(said).toEqual(['gpt-oss:20b cannot stop thinking on Ollama: it thinks at low effort.']);
  });
});

it('with thinking off, streams the answer of a model whose template usually opens reasoning as the answer', async () => {
  const { llm } = await setUp('llamacpp', 'qwen3.5-9b', [reply().text('Hello there.')], 'off');
  const events = await ask(llm, first);
  expect(events.filter((e) => e.type === 'reasoning_delta')).toEqual([]);
  expect(events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('')).toBe('Hello there.');
});

describe('what the server does not understand', () => {
  it('sends nothing when the setting is unset', async () => {
    const { llm } = await setUp('llamacpp', 'qwen3-8b', [reply().text('ok')]);
    await ask(llm, first);
    expect(reasoningPart(server!.requests[0]!.body as Record<string, unknown>)).toEqual({});
  });

  it('says once that thinking off was not taken when the model still reasons', async () => {
    const reasoned = () => reply().reasoning('Let me think.').text('ok');
    const { llm } = await setUp('openai-compatible', 'some-model', [reasoned(), reasoned()], 'off');
    const said = [...warnings(await ask(llm, first)), ...warnings(await ask(llm, second))];
    expect(said).toEqual([
      'Thinking is off, yet some-model still reasoned: this server (openai-compatible) or model does not take the setting.',
    ]);
  });

  it('says once that a model run in process takes no setting', async () => {
    const { settings } = await setUp('embedded', 'm.gguf', [], 'high');
    const done: LlmEvent = {
      type: 'done',
      message: { role: 'assistant', content: 'ok' },
      toolCalls: [],
    } as never;
    const embedded = {
      model: 'm.gguf',
      baseUrl: 'embedded:',
      async *stream() {
        yield done;
      },
    } as unknown as EmbeddedClient;
    const connection = { kind: 'embedded', embedded } as unknown as Connection;
    const llm = createClient(connection, settings);
    const said = [...warnings(await ask(llm, first)), ...warnings(await ask(llm, first))];
    expect(said).toEqual(['A model run in process takes no thinking setting: its own default stands.']);
  });
});
