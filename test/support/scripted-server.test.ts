import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from './manual-clock.js';
import {
  reply,
  type ScriptedServer,
  type ScriptedServerOptions,
  startScriptedServer,
} from './scripted-server.js';
import { waitUntil } from './wait.js';

let server: ScriptedServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(opts: ScriptedServerOptions): Promise<ScriptedServer> {
  server = await startScriptedServer(opts);
  return server;
}

function chat(
  s: ScriptedServer,
  extra: Record<string, unknown> = {},
  init: RequestInit = {},
): Promise<Response> {
  return fetch(`${s.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test-key' },
    body: JSON.stringify({ model: 'm1', messages: [{ role: 'user', content: 'hi' }], ...extra }),
    ...init,
  });
}

/** Every `data:` payload, `[DONE]` included, in order. */
function events(body: string): string[] {
  return body
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice('data: '.length));
}

// biome-ignore lint/suspicious/noExplicitAny: chunks are inspected structurally in assertions.
function chunks(body: string): any[] {
  return events(body)
    .filter((e) => e !== '[DONE]')
    .map((e) => JSON.parse(e));
}

async function stream(s: ScriptedServer) {
  const res = await chat(s, { stream: true });
  const text = await res.text();
  return { res, text, chunks: chunks(text) };
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected structurally in assertions.
async function json(res: Response | Promise<Response>): Promise<any> {
  return (await res).json();
}

// biome-ignore lint/suspicious/noExplicitAny: see above.
const deltas = (cs: any[]) => cs.flatMap((c) => c.choices.map((ch: any) => ch.delta));
// biome-ignore lint/suspicious/noExplicitAny: see above.
const joined = (cs: any[], field: string) =>
  deltas(cs)
    .map((d) => d[field] ?? '')
    .join('');

describe('streamed chat completions', () => {
  it('streams text in small chunks with role first, finish, usage and [DONE]', async () => {
    const s = await start({ turns: [reply().text('Hello, ').text('world! How are you?')] });
    const { res, text, chunks: cs } = await stream(s);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(events(text).at(-1)).toBe('[DONE]');
    expect(cs[0]).toMatchObject({ object: 'chat.completion.chunk', model: 'm1' });
    expect(cs[0].choices[0].delta.role).toBe('assistant');
    expect(joined(cs, 'content')).toBe('Hello, world! How are you?');
    const pieces = deltas(cs).filter((d) => d.content);
    expect(pieces.length).toBeGreaterThan(3);
    expect(pieces.every((d) => d.content.length <= 8)).toBe(true);
    const finish = cs.find((c) => c.choices[0]?.finish_reason);
    expect(finish.choices[0].finish_reason).toBe('stop');
    expect(cs.at(-1).usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: 7 });
    expect(s.remaining).toBe(0);
  });

  it('respects chunkSize, usage override and usage(null)', async () => {
    const s = await start({
      turns: [
        reply().text('abcdef').chunkSize(2).usage({ prompt: 10, completion: 3 }),
        reply().text('x').usage(null),
      ],
    });
    const first = await stream(s);
    expect(
      deltas(first.chunks)
        .filter((d) => d.content)
        .map((d) => d.content),
    ).toEqual(['ab', 'cd', 'ef']);
    expect(first.chunks.at(-1).usage).toEqual({ prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 });
    const second = await stream(s);
    expect(second.chunks.some((c) => c.usage)).toBe(false);
  });

  it('can put usage on the finish chunk', async () => {
    const s = await start({ turns: [reply().text('hi').usageOnFinishChunk()] });
    const last = (await stream(s)).chunks.at(-1);
    expect(last.choices[0].finish_reason).toBe('stop');
    expect(last.usage.total_tokens).toBeGreaterThan(0);
  });

  it('emits reasoning_content, reasoning and <think> with split tags, before content', async () => {
    const s = await start({
      turns: [reply().reasoning('weighing it').reasoningField('other name').think('inner').text('answer')],
    });
    const { chunks: cs } = await stream(s);
    expect(joined(cs, 'reasoning_content')).toBe('weighing it');
    expect(joined(cs, 'reasoning')).toBe('other name');
    expect(joined(cs, 'content')).toBe('<think>inner</think>answer');
    const pieces = deltas(cs)
      .filter((d) => d.content)
      .map((d) => d.content as string);
    expect(pieces).not.toContain('<think>');
    expect(pieces.some((p) => p.includes('<think>'))).toBe(false);
    expect(pieces.some((p) => p.includes('</think>'))).toBe(false);
    const order = deltas(cs).map((d) => Object.keys(d).find((k) => k !== 'role' && d[k] !== ''));
    expect(order.indexOf('content')).toBeGreaterThan(order.lastIndexOf('reasoning'));
  });

  it('streams parallel tool calls with ids on the first chunk and arguments in 3-7 char pieces', async () => {
    const s = await start({
      turns: [reply().tool('read_file', { path: 'README.md' }).tool('ls', '{"dir":"src"}', { id: 'mine' })],
    });
    const { chunks: cs } = await stream(s);
    const calls = deltas(cs).flatMap((d) => d.tool_calls ?? []);
    const first = calls.filter((c) => c.function?.name);
    expect(first).toEqual([
      { index: 0, id: 'call_1_0', type: 'function', function: { name: 'read_file', arguments: '' } },
      { index: 1, id: 'mine', type: 'function', function: { name: 'ls', arguments: '' } },
    ]);
    const args = (i: number): string[] =>
      calls.filter((c) => c.index === i && !c.function.name).map((c) => c.function.arguments);
    expect(args(0).join('')).toBe('{"path":"README.md"}');
    expect(args(1).join('')).toBe('{"dir":"src"}');
    expect(args(0).length).toBeGreaterThan(2);
    // Only each call's last piece may be shorter than 3.
    const sizes = [...args(0).slice(0, -1), ...args(1).slice(0, -1)].map((a) => a.length);
    expect(sizes.every((n) => n >= 3 && n <= 7)).toBe(true);
    expect(cs.find((c) => c.choices[0]?.finish_reason).choices[0].finish_reason).toBe('tool_calls');
  });

  it('omits ids when asked and can send arguments as an object', async () => {
    const s = await start({
      turns: [reply().tool('a', { x: 1 }, { id: null, argsAsObject: true }).finish('stop')],
    });
    const { chunks: cs } = await stream(s);
    const calls = deltas(cs).flatMap((d) => d.tool_calls ?? []);
    expect(calls).toEqual([{ index: 0, type: 'function', function: { name: 'a', arguments: { x: 1 } } }]);
    expect(cs.find((c) => c.choices[0]?.finish_reason).choices[0].finish_reason).toBe('stop');
  });
});

describe('non-streamed chat completions', () => {
  it('returns one chat.completion with content, reasoning, tool calls and usage', async () => {
    const s = await start({
      turns: [
        reply().reasoning('hmm').think('t').text('ok').tool('read_file', { path: 'a' }),
        reply().tool('b', {}),
      ],
    });
    const body = await json(chat(s));
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'm1',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: '<think>t</think>ok',
            reasoning_content: 'hmm',
            tool_calls: [
              {
                id: 'call_1_0',
                type: 'function',
                function: { name: 'read_file', arguments: '{"path":"a"}' },
              },
            ],
          },
        },
      ],
      usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) },
    });
    const second = await json(chat(s, { stream: false }));
    expect(second.choices[0].message.content).toBeNull();
  });
});

describe('faults', () => {
  it('answers 500 with a clear message when the script runs out', async () => {
    const s = await start({ turns: [reply().text('one')] });
    await (await chat(s)).text();
    const res = await chat(s);
    expect(res.status).toBe(500);
    expect(await json(res)).toEqual({ error: { message: 'scripted server: no more turns (1 played)' } });
  });

  it('httpError sends the status, Retry-After and a JSON or custom body', async () => {
    const s = await start({
      turns: [
        reply().httpError(429, { retryAfter: 2 }),
        reply().httpError(503, { body: 'overloaded' }),
        reply().text('ok'),
      ],
    });
    const first = await chat(s, { stream: true });
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('2');
    expect((await json(first)).error.message).toMatch(/429/);
    const second = await chat(s);
    expect(second.status).toBe(503);
    expect(await second.text()).toBe('overloaded');
    expect((await stream(s)).res.status).toBe(200);
    expect(s.requests).toHaveLength(3);
  });

  it('dropAfter streams n chunks then kills the socket without [DONE]', async () => {
    const s = await start({ turns: [reply().text('a long enough answer to need chunks').dropAfter(3)] });
    const res = await chat(s, { stream: true });
    const reader = res.body!.getReader();
    let text = '';
    const decoder = new TextDecoder();
    await expect(
      (async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          text += decoder.decode(value, { stream: true });
        }
      })(),
    ).rejects.toThrow();
    expect(events(text)).toHaveLength(3);
    expect(text).not.toContain('[DONE]');
  });

  it('dropAfter on a non-streamed request cuts the JSON body', async () => {
    const s = await start({ turns: [reply().text('hello').dropAfter(0)] });
    const res = await chat(s);
    await expect(res.text()).rejects.toThrow();
  });

  it('delays the first byte and the gaps between chunks on its clock', async () => {
    const clock = new ManualClock();
    const s = await start({
      clock,
      turns: [
        reply().text('x').delayFirstByte(150),
        reply().text('abcdefgh').chunkSize(2).delayBetweenChunks(30),
      ],
    });
    let answered = false;
    const first = chat(s).then((res) => {
      answered = true;
      return res;
    });
    await clock.nextTimer(150);
    expect(answered).toBe(false);
    clock.advance(150);
    expect((await json(first)).choices[0].message.content).toBe('x');

    // Role, four pieces, finish, usage and [DONE]: eight events, so seven gaps of 30 ms each.
    const res = await chat(s, { stream: true });
    const body = res.text();
    for (let gap = 0; gap < 7; gap++) await clock.elapse(30);
    expect(events(await body)).toHaveLength(8);
    expect(clock.pending).toEqual([]);
  });

  it('hang never answers; the client abort and close() both end it', async () => {
    const s = await start({ turns: [reply().hang(), reply().hang()] });
    const ac = new AbortController();
    const pending = chat(s, { stream: true }, { signal: ac.signal });
    await s.waitForRequests(1);
    ac.abort();
    await expect(pending).rejects.toThrow();
    await s.waitForDisconnects(1);
    const second = chat(s, { stream: true });
    await s.waitForRequests(2);
    await s.close();
    await expect(second).rejects.toThrow();
  });

  it('holdAfter pauses a stream mid-way until release(), and a client may leave meanwhile', async () => {
    const s = await start({
      turns: [
        reply().text('abcdefgh').chunkSize(2).holdAfter(3),
        reply().text('gone').holdAfter(2),
        reply().text('whole').holdAfter(0),
      ],
    });
    const res = await chat(s, { stream: true });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    await s.waitForHolds(1);
    // Three events (the role chunk, 'ab', 'cd') arrive; the rest waits for release().
    while (events(text).length < 3) text += decoder.decode((await reader.read()).value, { stream: true });
    expect(joined(chunks(text), 'content')).toBe('abcd');
    s.release();
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value);
    expect(joined(chunks(text), 'content')).toBe('abcdefgh');
    expect(events(text).at(-1)).toBe('[DONE]');

    const ac = new AbortController();
    const left = chat(s, { stream: true }, { signal: ac.signal });
    await s.waitForHolds(2);
    ac.abort();
    await expect(left.then((r) => r.text())).rejects.toThrow();
    await s.waitForDisconnects(1);

    // A release given before the hold is reached lets it pass; a hold at 0 stops even a JSON answer.
    s.release();
    expect((await json(chat(s))).choices[0].message.content).toBe('whole');
    expect(s.played).toBe(3);
  });

  it('malformedChunk inserts one bad line in the middle of an otherwise valid stream', async () => {
    const s = await start({ turns: [reply().text('some text to split').malformedChunk()] });
    const text = await (await chat(s, { stream: true })).text();
    const all = events(text);
    const bad = all.filter((e) => e !== '[DONE]' && !isJson(e));
    expect(bad).toEqual(['{not json']);
    const at = all.indexOf('{not json');
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(all.length - 2);
    expect(all.at(-1)).toBe('[DONE]');
    expect(joined(chunks(text.replace('data: {not json\n\n', '')), 'content')).toBe('some text to split');
  });

  it('raw sends the exact body text', async () => {
    const raw = 'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n: comment\n\ndata: [DONE]\n\n';
    const s = await start({ turns: [reply().raw(raw)] });
    expect((await stream(s)).text).toBe(raw);
  });

  it('reset drops the connection without a response', async () => {
    const s = await start({ turns: [reply().reset(), reply().text('ok')] });
    await expect(chat(s)).rejects.toThrow();
    expect(s.requests).toHaveLength(1);
    expect((await json(chat(s))).choices[0].message.content).toBe('ok');
  });
});

function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

describe('recording and scripting', () => {
  it('records chat requests exactly, and every request in allRequests', async () => {
    const s = await start({ turns: [reply().httpError(500), reply().text('ok')] });
    await (await chat(s, { temperature: 0 })).text();
    await (await fetch(`${s.baseUrl}/models`)).text();
    await (await chat(s)).text();
    expect(s.requests).toHaveLength(2);
    expect(s.requests[0]).toMatchObject({ path: '/v1/chat/completions', method: 'POST' });
    expect(s.requests[0]!.headers.authorization).toBe('Bearer test-key');
    expect(s.requests[0]!.body.temperature).toBe(0);
    expect(s.requests[0]!.raw).toBe(
      JSON.stringify({ model: 'm1', messages: [{ role: 'user', content: 'hi' }], temperature: 0 }),
    );
    expect(s.allRequests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /v1/chat/completions',
      'GET /v1/models',
      'POST /v1/chat/completions',
    ]);
  });

  it('push appends turns, and JSON data works the same as builders', async () => {
    const s = await start({ turns: [] });
    expect(s.remaining).toBe(0);
    const built = JSON.parse(JSON.stringify(reply().text('from json').tool('t', { a: 1 })));
    s.push(built, reply().text('from builder'));
    expect(s.remaining).toBe(2);
    expect(built).toEqual(reply().text('from json').tool('t', { a: 1 }).build());
    expect((await json(chat(s))).choices[0].message.content).toBe('from json');
    expect((await json(chat(s))).choices[0].message.content).toBe('from builder');
    expect(s.played).toBe(2);
  });

  it('reuses keep-alive connections and still closes (no idle socket holds it open)', async () => {
    const s = await start({ turns: [reply().text('a'), reply().text('b')] });
    await (await chat(s)).text();
    await (await chat(s, { stream: true })).text();
    await s.close();
  });
});

describe('other endpoints', () => {
  it('lists models', async () => {
    const s = await start({ models: ['model-a', 'model-b'] });
    expect(await json(fetch(`${s.baseUrl}/models`))).toEqual({
      object: 'list',
      data: [
        { id: 'model-a', object: 'model', created: 0, owned_by: 'scripted' },
        { id: 'model-b', object: 'model', created: 0, owned_by: 'scripted' },
      ],
    });
    const s2 = await startScriptedServer({});
    try {
      expect((await json(fetch(`${s2.baseUrl}/models`))).data[0].id).toBe('scripted-model');
    } finally {
      await s2.close();
    }
  });

  it('returns deterministic normalized embeddings for a string or an array', async () => {
    const s = await start({});
    const embed = (input: unknown) =>
      json(
        fetch(`${s.baseUrl}/embeddings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'e', input }),
        }),
      );
    const one = await embed('hello');
    expect(one).toMatchObject({ object: 'list', model: 'e', usage: { prompt_tokens: expect.any(Number) } });
    const many = await embed(['hello', 'world']);
    expect(many.data).toHaveLength(2);
    expect(many.data[0].embedding).toEqual(one.data[0].embedding);
    expect(many.data[1].embedding).not.toEqual(one.data[0].embedding);
    const v: number[] = one.data[0].embedding;
    expect(v).toHaveLength(16);
    expect(Math.hypot(...v)).toBeCloseTo(1, 6);
  });

  it('serves extra routes and 404s the rest', async () => {
    const s = await start({
      extraRoutes: {
        'GET /api/v0/models': () => ({ json: { data: [{ id: 'x', max_context_length: 4096 }] } }),
        'POST /api/show': (_req, body) => ({ status: 201, json: { echo: body } }),
      },
    });
    expect((await json(fetch(`${s.url}/api/v0/models?x=1`))).data[0].max_context_length).toBe(4096);
    const show = await fetch(`${s.url}/api/show`, { method: 'POST', body: '{"name":"x"}' });
    expect(show.status).toBe(201);
    expect(await json(show)).toEqual({ echo: { name: 'x' } });
    const missing = await fetch(`${s.url}/props`);
    expect(missing.status).toBe(404);
    expect((await json(missing)).error.message).toMatch(/no route for GET \/props/);
  });
});

describe("Ollama's native /api/chat", () => {
  function ollamaChat(s: ScriptedServer, extra: Record<string, unknown> = {}): Promise<Response> {
    return fetch(`${s.url}/api/chat`, {
      method: 'POST',
      body: JSON.stringify({ model: 'qwen3:4b', messages: [{ role: 'user', content: 'hi' }], ...extra }),
    });
  }
  // biome-ignore lint/suspicious/noExplicitAny: lines are inspected structurally in assertions.
  const lines = (body: string): any[] =>
    body
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l));

  it('streams NDJSON by default: thinking, content, whole tool calls, then done with counts', async () => {
    const s = await start({
      turns: [
        reply()
          .think('hmm')
          .text('Reading it.')
          .tool('read_file', { path: 'a' })
          .tool('read_file', { path: 'b' }, { id: 'x1' })
          .usage({ prompt: 40, completion: 9 }),
      ],
    });
    const res = await ollamaChat(s);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const ls = lines(await res.text());
    expect(ls.every((l) => l.model === 'qwen3:4b' && l.message.role === 'assistant')).toBe(true);
    expect(ls.map((l) => l.message.thinking ?? '').join('')).toBe('hmm');
    expect(ls.map((l) => l.message.content).join('')).toBe('Reading it.');
    const calls = ls.flatMap((l) => l.message.tool_calls ?? []);
    expect(calls).toEqual([
      { function: { name: 'read_file', arguments: { path: 'a' } } },
      { id: 'x1', function: { index: 1, name: 'read_file', arguments: { path: 'b' } } },
    ]);
    expect(ls.slice(0, -1).every((l) => l.done === false)).toBe(true);
    expect(ls.at(-1)).toMatchObject({
      done: true,
      done_reason: 'stop',
      prompt_eval_count: 40,
      eval_count: 9,
    });
    expect(s.requests.map((r) => r.path)).toEqual(['/api/chat']);
  });

  it('answers stream:false with one object, and errors in Ollama shape', async () => {
    const s = await start({ turns: [reply().think('t').text('whole'), reply().httpError(500)] });
    const body = await json(ollamaChat(s, { stream: false }));
    expect(body).toMatchObject({
      message: { role: 'assistant', content: 'whole', thinking: 't' },
      done: true,
    });
    const failed = await ollamaChat(s);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ error: 'scripted HTTP 500' });
  });

  it('dropAfter never sends the done line', async () => {
    const s = await start({ turns: [reply().text('abcdefghijklmnopqrstuvwxyz').dropAfter(99)] });
    const reader = (await ollamaChat(s)).body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      // the socket is destroyed on purpose
    }
    expect(
      lines(text)
        .map((l) => l.message.content)
        .join(''),
    ).toBe('abcdefghijklmnopqrstuvwxyz');
    expect(lines(text).some((l) => l.done)).toBe(false);
  });

  it('shares one script with the OpenAI route', async () => {
    const s = await start({ turns: [reply().text('one'), reply().text('two')] });
    await (await chat(s, { stream: true })).text();
    const ls = lines(await (await ollamaChat(s)).text());
    expect(ls.map((l) => l.message.content).join('')).toBe('two');
    expect(s.requests.map((r) => r.path)).toEqual(['/v1/chat/completions', '/api/chat']);
  });
});

describe('mock-llm cli', () => {
  it('serves the example script over HTTP', async () => {
    const cli = fileURLToPath(new URL('./mock-llm-cli.ts', import.meta.url));
    const script = fileURLToPath(new URL('./example-script.json', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', cli, '--script', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`mock-llm exited with ${code}`)));
      });
      const match = /^mock-llm listening on (http:\/\/127\.0\.0\.1:\d+\/v1)$/.exec(line);
      expect(match).not.toBeNull();
      const stderr: string[] = [];
      child.stderr!.on('data', (d: Buffer) => stderr.push(d.toString()));
      const post = (stream: boolean) =>
        fetch(`${match![1]}/chat/completions`, {
          method: 'POST',
          body: JSON.stringify({ model: 'm', messages: [], stream }),
        });
      const text = await (await post(true)).text();
      const calls = deltas(chunks(text)).flatMap((d) => d.tool_calls ?? []);
      expect(calls[0].function.name).toBe('read_file');
      expect(calls.map((c) => c.function.arguments).join('')).toBe('{"path":"README.md"}');
      expect((await json(post(false))).choices[0].message.content).toMatch(/Hearth/);
      expect((await post(false)).status).toBe(500);
      const logged = /POST \/v1\/chat\/completions model=m .*turn=1/;
      await waitUntil(() => logged.test(stderr.join('')), 'the request log on stderr');
    } finally {
      child.kill('SIGTERM');
    }
  });
});
