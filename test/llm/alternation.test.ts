/**
 * Every stored history is sent with user and assistant taking turns (strict chat templates reject
 * anything else), without rewriting what is stored, and requests stay append-only for prompt caches.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { alternating, BRIDGE } from '../../src/llm/alternation.js';
import { createLlmClient } from '../../src/llm/client.js';
import { createOllamaClient } from '../../src/llm/ollama.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

describe('alternating', () => {
  const system: ChatMessage = { role: 'system', content: 'Be brief.' };

  it('merges user messages in a row into one, and leaves an alternating history as it is', () => {
    const fine: ChatMessage[] = [
      system,
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'user', content: 'c' },
    ];
    expect(alternating(fine)).toBe(fine);

    const image = { mimeType: 'image/png', base64: 'AAAA' };
    const stored: ChatMessage[] = [
      system,
      { role: 'user', content: 'write notes.txt' },
      { role: 'user', content: 'and count its lines', images: [image] },
      { role: 'user', content: 'then stop' },
      { role: 'assistant', content: 'Done.' },
      { role: 'user', content: 'thanks' },
      { role: 'user', content: 'bye' },
    ];
    const copy = structuredClone(stored);
    expect(alternating(stored)).toEqual([
      system,
      { role: 'user', content: 'write notes.txt\n\nand count its lines\n\nthen stop', images: [image] },
      { role: 'assistant', content: 'Done.' },
      { role: 'user', content: 'thanks\n\nbye' },
    ]);
    expect(stored).toEqual(copy);
  });

  it('puts an assistant turn between tool results the model did not answer and the next user message', () => {
    const call = { id: 'c1', type: 'function' as const, function: { name: 'read_file', arguments: '{}' } };
    const stored: ChatMessage[] = [
      system,
      { role: 'user', content: 'read notes.txt' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'c1', content: 'Error: interrupted' },
      { role: 'user', content: 'carry on' },
      { role: 'user', content: 'and be quick' },
    ];
    const sent = alternating(stored);
    expect(sent).toEqual([
      ...stored.slice(0, 4),
      { role: 'assistant', content: BRIDGE },
      { role: 'user', content: 'carry on\n\nand be quick' },
    ]);
    // The same objects for the same history: the request's bytes are written once.
    expect(alternating(stored)[4]).toBe(sent[4]);
    // Answered in text, the tool results need no bridge; nor does a transport that keeps them in the model's turn.
    const answered = [
      ...stored.slice(0, 4),
      { role: 'assistant', content: 'Read.' } as ChatMessage,
      stored[4]!,
    ];
    expect(alternating(answered)).toBe(answered);
    expect(alternating(stored, false)).toEqual([...stored.slice(0, 4), sent[5]]);
  });

  it('gives the same merged object while the history grows after it, so request bytes only grow', () => {
    const history: ChatMessage[] = [
      system,
      { role: 'user', content: 'task' },
      { role: 'user', content: 'more' },
    ];
    const first = alternating(history);
    history.push({ role: 'assistant', content: 'ok' }, { role: 'user', content: 'next' });
    const second = alternating(history);
    expect(second[1]).toBe(first[1]);
    expect(second.slice(0, first.length)).toEqual(first);
  });
});

describe('requests to a server whose chat template wants alternating turns', () => {
  let server: ScriptedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  // The histories a process killed mid-reply leaves, and the next task after it: killed during the
  // first reply, and during a reply after tool results (its calls answered as interrupted on resume).
  const afterKill: ChatMessage[] = [
    { role: 'system', content: 'You are Hearth.' },
    { role: 'user', content: 'write notes.txt' },
    { role: 'user', content: 'carry on' },
  ];
  const call = { id: 'c1', type: 'function' as const, function: { name: 'write_file', arguments: '{}' } };
  const afterKillInTools: ChatMessage[] = [
    { role: 'system', content: 'You are Hearth.' },
    { role: 'user', content: 'write notes.txt' },
    { role: 'assistant', content: null, tool_calls: [call] },
    { role: 'tool', tool_call_id: 'c1', content: 'Error: interrupted' },
    { role: 'user', content: 'carry on' },
  ];

  it('are refused unrepaired by that server, as vLLM refuses them (the check the tests above rely on)', async () => {
    server = await startScriptedServer({ turns: [reply().text('never')], strictAlternation: true });
    const res = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: afterKillInTools }),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('conversation roles must alternate');
  });

  for (const [name, create] of [
    ['OpenAI-compatible', createLlmClient],
    ['Ollama native', createOllamaClient],
  ] as const) {
    it(`are sent alternating (${name})`, async () => {
      server = await startScriptedServer({ turns: [reply().text('Carried on.')], strictAlternation: true });
      const client = create({ baseUrl: server.baseUrl, model: 'm', retry: { maxRetries: 0 } });
      let last: string | undefined;
      for await (const e of client.stream({ messages: afterKill })) last = e.type;
      expect(last).toBe('done');
      expect(server.requests[0]!.body.messages).toEqual([
        { role: 'system', content: 'You are Hearth.' },
        { role: 'user', content: 'write notes.txt\n\ncarry on' },
      ]);
    });

    it(`bridge tool results the model did not answer (${name})`, async () => {
      server = await startScriptedServer({ turns: [reply().text('Carried on.')], strictAlternation: true });
      const client = create({ baseUrl: server.baseUrl, model: 'm', retry: { maxRetries: 0 } });
      const events = [];
      for await (const e of client.stream({ messages: afterKillInTools })) events.push(e);
      expect(events.at(-1)).toMatchObject({ type: 'done' });
      const sent = server.requests[0]!.body.messages as { role: string; content: unknown }[];
      expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
      expect(sent[4]).toMatchObject({ role: 'assistant', content: BRIDGE });
    });
  }
});
