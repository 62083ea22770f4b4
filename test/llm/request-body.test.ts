import { describe, expect, it } from 'vitest';
import { RequestBodies } from '../../src/llm/request-body.js';
import type { ChatMessage } from '../../src/llm/types.js';

/** The body as the server receives it: its pieces, one after another. */
const text = (pieces: Buffer[]) => Buffer.concat(pieces).toString('utf8');

/**
 * Prefix stability needs the body's bytes to be exactly what JSON.stringify writes for it, step
 * after step, while the messages already written are not serialised again.
 */
describe('request bodies built from each message written once', () => {
  const tools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
  const rest = {
    tools,
    stream: true,
    stream_options: { include_usage: true },
    temperature: undefined,
    seed: 7,
  };

  it('writes the same bytes as JSON.stringify of the whole body, as the history grows', () => {
    const bodies = new RequestBodies();
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are "Hearth" \u2028 with\ttabs, emoji 🔥 and \u0007 bells.' },
      { role: 'user', content: 'read a.ts' },
    ];
    for (let step = 0; step < 4; step++) {
      const expected = JSON.stringify({ model: 'qwen "coder"', messages, ...rest });
      expect(text(bodies.chat('qwen "coder"', messages, rest))).toBe(expected);
      messages.push(
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            {
              id: `c${step}`,
              type: 'function',
              function: { name: 'read_file', arguments: '{"path":"a.ts"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: `c${step}`, content: `line ${step}` },
      );
    }
  });

  it('serialises a message once, and a message put in its place (compaction) anew', () => {
    const bodies = new RequestBodies();
    const old: ChatMessage = { role: 'tool', tool_call_id: 'c1', content: 'long output' };
    const messages: ChatMessage[] = [{ role: 'user', content: 'go' }, old];
    let calls = 0;
    const counted = new Proxy(old, {
      get(target, key, receiver) {
        if (key === 'content') calls++;
        return Reflect.get(target, key, receiver);
      },
    });
    messages[1] = counted;
    bodies.chat('m', messages, {});
    bodies.chat('m', messages, {});
    expect(calls).toBe(1);
    messages[1] = { ...old, content: '[elided]' };
    expect(text(bodies.chat('m', messages, {}))).toBe(JSON.stringify({ model: 'm', messages }));
  });

  it('keeps each body it handed out intact while later ones grow, and writes a changed history anew', () => {
    const bodies = new RequestBodies();
    const messages: ChatMessage[] = [{ role: 'system', content: 'Be brief. 🔥' }];
    const handedOut: { pieces: Buffer[]; expected: string }[] = [];
    for (let step = 0; step < 300; step++) {
      messages.push({ role: 'user', content: `step ${step} ${'é'.repeat(step % 7)} ${'x'.repeat(100)}` });
      handedOut.push({
        pieces: bodies.chat('m', messages, { stream: true }),
        expected: JSON.stringify({ model: 'm', messages, stream: true }),
      });
    }
    // Bodies still being sent (or retried) while the history grew are the bytes they were.
    for (const { pieces, expected } of handedOut) expect(text(pieces)).toBe(expected);
    // Compaction puts a shorter history in place; an edit changes a message in the middle.
    const compacted: ChatMessage[] = [messages[0]!, { role: 'user', content: 'summary' }, messages.at(-1)!];
    expect(text(bodies.chat('m', compacted, {}))).toBe(JSON.stringify({ model: 'm', messages: compacted }));
    const edited = [...compacted];
    edited[1] = { role: 'user', content: 'a shorter summary' };
    expect(text(bodies.chat('m', edited, {}))).toBe(JSON.stringify({ model: 'm', messages: edited }));
    edited.push({ role: 'assistant', content: 'ok' });
    expect(text(bodies.chat('m', edited, {}))).toBe(JSON.stringify({ model: 'm', messages: edited }));
  });
});
