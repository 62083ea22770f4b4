/**
 * What only the OpenAI-compatible transport has: its request fields, the `reasoning_content` and
 * `reasoning` fields, and tool calls written in the text in each format local models use. The
 * behaviour both transports share (streaming, retries, abort, timeouts, errors) is in
 * transport-contract.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLlmClient, type LlmClientOptions } from '../../src/llm/client.js';
import type { LlmEvent } from '../../src/llm/types.js';
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

async function run(turns: TurnInput[], opts: Partial<LlmClientOptions> = {}) {
  server = await startScriptedServer({ turns });
  const client = createLlmClient({
    baseUrl: server.baseUrl,
    model: 'scripted-model',
    retry: { maxRetries: 0 },
    ...opts,
  });
  const events: LlmEvent[] = [];
  for await (const e of client.stream({ messages: [{ role: 'user', content: 'hi' }], tools })) events.push(e);
  const last = events.at(-1)!;
  const text = events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('');
  const reasoning = events.flatMap((e) => (e.type === 'reasoning_delta' ? [e.text] : [])).join('');
  return { events, last, text, reasoning, done: last.type === 'done' ? last : undefined };
}

describe('llm client over real HTTP (OpenAI dialect)', () => {
  it('asks for usage in the stream and sends sampling settings and the API key as OpenAI fields', async () => {
    await run([reply().text('ok')], { temperature: 0.2, topP: 0.9, seed: 7, maxTokens: 512, apiKey: 'sk-1' });
    const request = server!.requests[0]!;
    expect(request.body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
      top_p: 0.9,
      seed: 7,
      max_tokens: 512,
    });
    expect(request.headers.authorization).toBe('Bearer sk-1');
  });

  it.each([
    ['reasoning_content', reply().reasoning('step one, step two').text('Answer.')],
    ['reasoning', reply().reasoningField('step one, step two').text('Answer.')],
  ])('separates reasoning sent in the %s field', async (_label, turn) => {
    const r = await run([turn]);
    expect(r.reasoning).toBe('step one, step two');
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
});
