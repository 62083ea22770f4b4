/**
 * The embedded transport against the real node-llama-cpp prebuilt CPU binary and a model the test
 * writes itself (test/support/tiny-gguf.ts): nothing is downloaded. The model's weights are random,
 * so the tests assert the contract (events, tool-call shape, usage, abort), never the words.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEmbeddedClient, type EmbeddedClient } from '../../../src/llm/embedded/embedded-client.js';
import { importNodeLlamaCpp, isInstalled } from '../../../src/llm/embedded/node-llama-cpp.js';
import { type ChatMessage, type LlmEvent, type ToolCall, toWireToolCall } from '../../../src/llm/types.js';
import { ToolRegistry } from '../../../src/tools/registry.js';
import { defineTool } from '../../../src/tools/types.js';
import { writeTinyLlamaGguf } from '../../support/tiny-gguf.js';
import { makeToolContext } from '../../support/tool-context.js';

const lib = await importNodeLlamaCpp();
const installed = isInstalled(lib);
const why = `skipped: ${'missing' in lib ? lib.missing : ''} (.ci/run installs it)`;

async function collect(stream: AsyncGenerator<LlmEvent>): Promise<LlmEvent[]> {
  const events: LlmEvent[] = [];
  for await (const e of stream) events.push(e);
  return events;
}

const last = (events: LlmEvent[]) => events[events.length - 1];

describe.skipIf(!installed)('embedded GGUF model through node-llama-cpp', () => {
  let dir: string;
  let modelPath: string;
  let client: EmbeddedClient;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hearth-embedded-'));
    modelPath = join(dir, 'tiny.gguf');
    const size = writeTinyLlamaGguf(modelPath);
    expect(size).toBeLessThan(1024 * 1024);
    client = createEmbeddedClient({
      modelPath,
      cpuOnly: true,
      threads: 1,
      temperature: 0,
      seed: 1,
      maxTokens: 12,
    });
  });
  afterAll(async () => {
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads the generated model with its trained context window', async () => {
    expect(await client.load()).toEqual({ contextWindow: 4096 });
  });

  it('streams a completion and reports usage', async () => {
    const events = await collect(
      client.stream({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'hello there' },
        ],
      }),
    );
    const done = last(events);
    expect(done?.type).toBe('done');
    if (done?.type !== 'done') return;
    const streamed = events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('');
    expect(streamed.length).toBeGreaterThan(0);
    expect(done.message.content).toBe(streamed);
    expect(done.usage?.completion).toBeGreaterThan(0);
    expect(done.usage?.completion).toBeLessThanOrEqual(12);
    // The prompt is at least the user's eleven bytes, each its own token in this vocabulary.
    expect(done.usage?.prompt).toBeGreaterThan(11);
    expect(done.toolCalls).toEqual([]);
  });

  it('ends with one aborted error when the signal fires mid-generation', async () => {
    const abort = new AbortController();
    const long = createEmbeddedClient({
      modelPath,
      cpuOnly: true,
      threads: 1,
      temperature: 0,
      maxTokens: 400,
    });
    const events: LlmEvent[] = [];
    for await (const e of long.stream({
      messages: [{ role: 'user', content: 'go on' }],
      signal: abort.signal,
    })) {
      events.push(e);
      if (e.type === 'text_delta') abort.abort();
    }
    await long.close();
    expect(events.some((e) => e.type === 'text_delta')).toBe(true);
    expect(last(events)).toEqual({
      type: 'error',
      error: { kind: 'aborted', message: 'Request cancelled.' },
    });
  });

  it('forces a tool call with the grammar; Hearth runs it and the result goes into the next turn', async () => {
    // Arguments from a closed set: a random model left free inside a string would not end it.
    const picked: string[] = [];
    const pick = defineTool({
      name: 'pick_shelf',
      description: 'Pick a shelf.',
      parameters: z.object({ shelf: z.enum(['top', 'bottom']) }),
      mutates: false,
      run: async (args) => {
        picked.push(args.shelf);
        return `picked the ${args.shelf} shelf`;
      },
    });
    const registry = new ToolRegistry([pick]);
    const messages: ChatMessage[] = [{ role: 'user', content: 'pick a shelf' }];
    // Byte tokens: the call's JSON alone is some forty tokens.
    const caller = createEmbeddedClient({
      modelPath,
      cpuOnly: true,
      threads: 1,
      temperature: 0,
      maxTokens: 120,
    });
    const first = last(
      await collect(caller.stream({ messages, tools: registry.schemas(), toolChoice: 'required' })),
    );
    expect(first?.type).toBe('done');
    if (first?.type !== 'done') return;
    expect(first.toolCalls).toHaveLength(1);
    const call = first.toolCalls[0] as ToolCall;
    expect(call.name).toBe('pick_shelf');
    expect(call.problem).toBeUndefined();
    expect(['{"shelf":"top"}', '{"shelf":"bottom"}']).toContain(call.arguments);
    expect(first.finishReason).toBe('tool_calls');
    expect(first.message).toEqual({ role: 'assistant', content: null, tool_calls: [toWireToolCall(call)] });

    const result = await registry.execute(call, makeToolContext(dir));
    expect(result.ok).toBe(true);
    expect(picked).toEqual([JSON.parse(call.arguments).shelf]);
    messages.push(first.message, { role: 'tool', tool_call_id: call.id, content: result.output });
    const second = last(await collect(caller.stream({ messages, tools: registry.schemas() })));
    await caller.close();
    expect(second?.type).toBe('done');
    if (second?.type !== 'done') return;
    // The tool's result is part of the prompt the model continued from.
    expect(second.usage?.prompt).toBeGreaterThan(first.usage?.prompt ?? 0);
  });
});

describe.skipIf(installed)('embedded GGUF model through node-llama-cpp', () => {
  it.skip(why, () => {});
});
