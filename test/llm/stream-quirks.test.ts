import { afterEach, describe, expect, it } from 'vitest';
import { createLlmClient, type LlmClient } from '../../src/llm/client.js';
import type { LlmEvent, ToolSchema } from '../../src/llm/types.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';

/** What local servers really send, byte for byte, and what the client must make of it. */

const tools: ToolSchema[] = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'read',
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
    },
  },
];

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function client(turns: TurnInput[], model = 'local-model'): Promise<LlmClient> {
  server = await startScriptedServer({ turns });
  return createLlmClient({ baseUrl: server.baseUrl, model, retry: { maxRetries: 0 } });
}

async function ask(llm: LlmClient) {
  const events: LlmEvent[] = [];
  for await (const e of llm.stream({ messages: [{ role: 'user', content: 'hi' }], tools })) events.push(e);
  const done = events.at(-1);
  if (done?.type !== 'done') throw new Error(`no done: ${JSON.stringify(done)}`);
  const of = (type: string) =>
    events.flatMap((e) =>
      (e.type === 'text_delta' || e.type === 'reasoning_delta') && e.type === type ? [e.text] : [],
    );
  return { events, done, text: of('text_delta').join(''), reasoning: of('reasoning_delta').join('') };
}

const data = (chunk: object) => `data: ${JSON.stringify(chunk)}\n\n`;
const delta = (d: object, finish: string | null = null, usage?: object) =>
  data({ choices: [{ index: 0, delta: d, finish_reason: finish }], ...(usage ? { usage } : {}) });
const call = (index: number, fn: object, id?: string) =>
  delta({ tool_calls: [{ index, ...(id ? { id } : {}), function: fn }] });

describe('streamed tool-call deltas', () => {
  it('does not make a call of a nameless, idless fragment that continues nothing', async () => {
    const llm = await client([
      reply().raw(
        call(0, { name: 'read_file', arguments: '' }, 'call_a') +
          call(0, { arguments: '{"path": "a"}' }) +
          // llama-server builds that send trailing pieces under a fresh index
          call(1, { arguments: '}' }) +
          delta({}, 'tool_calls') +
          'data: [DONE]\n\n',
      ),
    ]);
    const { done, events } = await ask(llm);
    expect(done.toolCalls).toEqual([{ id: 'call_a', name: 'read_file', arguments: '{"path": "a"}' }]);
    expect(events).toContainEqual({
      type: 'warning',
      message: 'Ignored 1 tool-call fragment(s) that belonged to no call.',
    });
  });

  it('lets such a fragment finish the last call when its arguments are not complete yet', async () => {
    const llm = await client([
      reply().raw(
        call(0, { name: 'read_file', arguments: '{"path": "a"' }, 'call_a') +
          call(1, { arguments: '}' }) +
          delta({}, 'tool_calls') +
          'data: [DONE]\n\n',
      ),
    ]);
    expect((await ask(llm)).done.toolCalls).toEqual([
      { id: 'call_a', name: 'read_file', arguments: '{"path": "a"}' },
    ]);
  });

  it('does not double arguments that a final chunk repeats whole', async () => {
    const llm = await client([
      reply().raw(
        call(0, { name: 'read_file', arguments: '' }, 'call_a') +
          call(0, { arguments: '{"path":' }) +
          call(0, { arguments: ' "a"}' }) +
          // some vLLM parsers close with the complete arguments again
          delta(
            {
              tool_calls: [
                {
                  index: 0,
                  id: 'call_a',
                  type: 'function',
                  function: { name: 'read_file', arguments: '{"path": "a"}' },
                },
              ],
            },
            'tool_calls',
          ) +
          'data: [DONE]\n\n',
      ),
    ]);
    expect((await ask(llm)).done.toolCalls).toEqual([
      { id: 'call_a', name: 'read_file', arguments: '{"path": "a"}' },
    ]);
  });

  it('does not append the last call arguments a GLM-4.7 final chunk repeats in another spelling', async () => {
    // vLLM's glm47 parser (tests/tool_parsers/test_glm47_final_delta_bug.py, PR #37385, issue
    // #44098): the serving layer re-serialises the last call's arguments at the finish, the text
    // no longer matches what was streamed, and the whole object comes again with finish_reason.
    const llm = await client([
      reply().raw(
        call(0, { name: 'read_file', arguments: '' }, 'call_a') +
          call(0, { arguments: '{"path":"a.md"' }) +
          call(0, { arguments: '}' }) +
          call(1, { name: 'read_file', arguments: '' }, 'call_b') +
          call(1, { arguments: '{"path":' }) +
          call(1, { arguments: '"b.md"}' }) +
          delta(
            {
              tool_calls: [
                {
                  index: 1,
                  id: 'call_b',
                  type: 'function',
                  function: { name: 'read_file', arguments: '{"path": "b.md"}' },
                },
              ],
            },
            'tool_calls',
          ) +
          'data: [DONE]\n\n',
      ),
    ]);
    const calls = (await ask(llm)).done.toolCalls;
    expect(calls.map((c) => [c.id, JSON.parse(c.arguments)])).toEqual([
      ['call_a', { path: 'a.md' }],
      ['call_b', { path: 'b.md' }],
    ]);
  });

  it('does not append a whole object after the lone brace streamed before it', async () => {
    // vLLM issue #51697 (xlam parser): "{" streamed, then the full object at the end of the stream.
    const llm = await client([
      reply().raw(
        call(0, { name: 'read_file', arguments: '{' }, 'call_a') +
          delta({ tool_calls: [{ index: 0, function: { arguments: '{"path": "a"}' } }] }, 'tool_calls') +
          'data: [DONE]\n\n',
      ),
    ]);
    expect((await ask(llm)).done.toolCalls).toEqual([
      { id: 'call_a', name: 'read_file', arguments: '{"path": "a"}' },
    ]);
  });

  it('drops a call that never got a name, and says so', async () => {
    const llm = await client([
      reply().raw(
        `${call(0, { arguments: '{}' }, 'call_x') + delta({ content: 'ok' }, 'stop')}data: [DONE]\n\n`,
      ),
    ]);
    const { done, events } = await ask(llm);
    expect(done.toolCalls).toEqual([]);
    expect(events).toContainEqual({
      type: 'warning',
      message: 'The model server sent a tool call without a name; it was ignored.',
    });
  });

  it('does not run a server-parsed call whose arguments max_tokens cut', async () => {
    const llm = await client([
      reply().raw(
        call(0, { name: 'read_file', arguments: '{"path": "a' }, 'call_a') +
          delta({}, 'length') +
          'data: [DONE]\n\n',
      ),
    ]);
    const [only] = (await ask(llm)).done.toolCalls;
    expect(only).toMatchObject({ id: 'call_a', name: 'read_file', arguments: '{}' });
    expect(only?.problem).toMatch(/cut off .*max_tokens/);
  });
});

describe('chunks that break the rules', () => {
  it('reads a chunk pretty-printed over several lines with data: on the first only', async () => {
    const pretty = JSON.stringify(
      { choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: null }] },
      null,
      2,
    );
    const llm = await client([
      reply().raw(`data: ${pretty}\n\n${delta({ content: ' there' }, 'stop')}data: [DONE]\n\n`),
    ]);
    const { text, events } = await ask(llm);
    expect(text).toBe('Hello there');
    expect(events.some((e) => e.type === 'warning')).toBe(false);
  });

  it('joins a chunk split over two events, even mid-string', async () => {
    const whole = JSON.stringify({
      choices: [{ index: 0, delta: { content: 'spilled text' }, finish_reason: null }],
    });
    const cut = whole.indexOf('spilled') + 3;
    const llm = await client([
      reply().raw(
        `data: ${whole.slice(0, cut)}\n\ndata: ${whole.slice(cut)}\n\n${delta({}, 'stop')}data: [DONE]\n\n`,
      ),
    ]);
    const { text, events } = await ask(llm);
    expect(text).toBe('spilled text');
    expect(events.some((e) => e.type === 'warning')).toBe(false);
  });

  it('takes usage reported in every chunk as running totals, not to be summed', async () => {
    const llm = await client([
      reply().raw(
        delta({ content: 'a' }, null, { prompt_tokens: 50, completion_tokens: 1 }) +
          delta({ content: 'b' }, null, { prompt_tokens: 50, completion_tokens: 2 }) +
          delta({}, 'stop', { prompt_tokens: 50, completion_tokens: 3 }) +
          'data: [DONE]\n\n',
      ),
    ]);
    expect((await ask(llm)).done.usage).toMatchObject({ prompt: 50, completion: 3 });
  });
});

describe('reasoning the template opened', () => {
  const bare = (text: string) => reply().text(text).chunkSize(4);

  it('learns it from the first reply and streams the next one as reasoning from the start', async () => {
    const llm = await client([bare('Plan one.</think>Answer one.'), bare('Plan two.</think>Answer two.')]);
    const first = await ask(llm);
    expect(first.done.message.content).toBe('Answer one.');
    expect(first.done.reasoning).toBe('Plan one.');
    const second = await ask(llm);
    expect(second.reasoning).toBe('Plan two.');
    expect(second.text).toBe('Answer two.');
  });

  it('knows it from the model name, and takes a reply that never closes it as the answer', async () => {
    const llm = await client(
      [bare('Thought.</think>Sure.'), bare('Just the answer, no thinking.')],
      'qwq-32b',
    );
    const first = await ask(llm);
    expect([first.reasoning, first.text]).toEqual(['Thought.', 'Sure.']);
    const second = await ask(llm);
    expect(second.done.message.content).toBe('Just the answer, no thinking.');
    expect(second.done.reasoning).toBe('');
    expect(second.text).toBe('Just the answer, no thinking.');
  });

  it('keeps a reply cut at max_tokens while still thinking as reasoning', async () => {
    const llm = await client([bare('Still thinking about').finish('length')], 'qwq-32b');
    const { done } = await ask(llm);
    expect(done.reasoning).toBe('Still thinking about');
    expect(done.message.content).toBe('');
  });
});

describe('holding markup back', () => {
  it('streams prose live, never the markup, and the prose after a call at the end', async () => {
    const llm = await client([
      reply()
        .text(
          'Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a"}}\n</tool_call>\nThen I decide.',
        )
        .chunkSize(2),
    ]);
    const { events, done } = await ask(llm);
    const texts = events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : []));
    expect(texts.join('')).toBe('Let me look.\n\nThen I decide.');
    expect(texts.length).toBeGreaterThan(3);
    expect(done.message.content).toBe('Let me look.\n\nThen I decide.');
    expect(done.toolCalls.map((c) => c.name)).toEqual(['read_file']);
  });

  it('lets JSON that turns out not to be a call through', async () => {
    const llm = await client([reply().text('The config is {"a": 1} and that is all.').chunkSize(3)]);
    const { text } = await ask(llm);
    expect(text).toBe('The config is {"a": 1} and that is all.');
  });
});
