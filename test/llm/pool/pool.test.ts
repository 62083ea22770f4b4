import { afterEach, describe, expect, it } from 'vitest';
import { type ConfigInput, configSchema } from '../../../src/config/schema.js';
import type { LlmClient } from '../../../src/llm/client.js';
import { type Connection, createClient, resolveConnection } from '../../../src/llm/connection.js';
import type { PooledClient } from '../../../src/llm/pool/pooled-client.js';
import type { LlmEvent } from '../../../src/llm/types.js';
import { ManualClock } from '../../support/manual-clock.js';
import { reply, type ScriptedServer, startScriptedServer } from '../../support/scripted-server.js';
import { waitUntil } from '../../support/wait.js';

/** llama.cpp's `/props` (its server README) with the window each test server claims. */
function props(nCtx: number) {
  return { 'GET /props': () => ({ json: { default_generation_settings: { n_ctx: nCtx }, total_slots: 1 } }) };
}

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close().catch(() => undefined)));
});

async function server(name: string, nCtx = 8192, port?: number): Promise<ScriptedServer> {
  const turns = Array.from({ length: 20 }, (_, i) => reply().text(`${name} ${i}`));
  const s = await startScriptedServer({ turns, models: ['m'], extraRoutes: props(nCtx), port });
  servers.push(s);
  return s;
}

function settings(endpoints: NonNullable<ConfigInput['llm']>['endpoints'], extra: ConfigInput = {}) {
  return configSchema.parse({ model: 'm', max_retries: 1, llm: { endpoints }, ...extra });
}

async function ask(client: LlmClient): Promise<{ text: string; events: LlmEvent[] }> {
  const events: LlmEvent[] = [];
  for await (const e of client.stream({ messages: [{ role: 'user', content: 'hi' }] })) events.push(e);
  const done = events.find((e) => e.type === 'done');
  return { text: done?.type === 'done' ? (done.message.content ?? '') : '', events };
}

function onServer(client: LlmClient): string | undefined {
  return (client as PooledClient).endpoint?.settings.url;
}

describe('a pool of model servers (llm.endpoints)', () => {
  it('spreads sessions over a tier, keeps each on its server, and budgets with the smallest window', async () => {
    const [a, b, c] = [await server('A', 8192), await server('B', 4096), await server('C', 16384)];
    const config = settings([
      { url: a.baseUrl, priority: 1 },
      { url: b.baseUrl, priority: 1 },
      { url: c.baseUrl, priority: 2 },
    ]);
    const connection = await resolveConnection(config);
    expect(connection.pool).toBeDefined();
    expect(connection.contextWindow).toBe(4096);
    expect(connection.contextSource).toContain(b.baseUrl);

    const one = createClient(connection, config);
    const two = createClient(connection, config);
    await ask(one);
    await ask(two);
    const first = onServer(one);
    expect(new Set([first, onServer(two)])).toEqual(new Set([a.baseUrl, b.baseUrl]));
    for (let i = 0; i < 3; i++) expect((await ask(one)).text).toMatch(first === a.baseUrl ? /^A/ : /^B/);
    expect(c.requests).toHaveLength(0);
  });

  it('moves a session off a dead server within one request, falls over to the next tier, and returns new sessions after recovery', async () => {
    const clock = new ManualClock();
    const a = await server('A');
    const b = await server('B');
    const c = await server('C');
    const config = settings([
      { url: a.baseUrl, priority: 1 },
      { url: b.baseUrl, priority: 1 },
      { url: c.baseUrl, priority: 2 },
    ]);
    const connection: Connection = await resolveConnection(config, { clock });
    const onA = createClient(connection, config);
    const onB = createClient(connection, config);
    await ask(onA);
    await ask(onB);
    const [dying, other] = onServer(onA) === a.baseUrl ? [a, b] : [b, a];
    const [victim, healthy] = onServer(onA) === a.baseUrl ? [onA, onB] : [onB, onA];

    await dying.close();
    const moved = await ask(victim);
    expect(moved.text).toMatch(new RegExp(`^${other === a ? 'A' : 'B'}`));
    expect(moved.events.some((e) => e.type === 'warning' && e.message.includes(dying.baseUrl))).toBe(true);
    expect(onServer(victim)).toBe(other.baseUrl);
    const servedBefore = other.requests.length;
    await ask(healthy);
    expect(onServer(healthy)).toBe(other.baseUrl);
    expect(other.requests.length).toBe(servedBefore + 1);

    await other.close();
    const fallen = await ask(victim);
    expect(fallen.text).toMatch(/^C/);
    expect((await ask(healthy)).text).toMatch(/^C/);
    const status = connection.pool!.status();
    expect(
      status
        .filter((s) => s.state === 'down')
        .map((s) => s.url)
        .sort(),
    ).toEqual([a.baseUrl, b.baseUrl].sort());

    // The first tier's server comes back on its port; once its cool-down has passed, a new session
    // goes there while the sessions already on the next tier stay where they are.
    const back = await server('A2', 8192, Number(new URL(dying.baseUrl).port));
    clock.advance(60_000);
    const fresh = createClient(connection, config);
    expect((await ask(fresh)).text).toMatch(/^A2/);
    expect(onServer(fresh)).toBe(back.baseUrl);
    expect((await ask(victim)).text).toMatch(/^C/);
  });

  it('says which servers failed and why when none answers', async () => {
    const a = await server('A');
    const config = settings([{ url: a.baseUrl }]);
    const connection = await resolveConnection(config);
    const client = createClient(connection, { ...config, max_retries: 1 });
    await a.close();
    const { events } = await ask(client);
    const last = events.at(-1);
    expect(last?.type).toBe('error');
    expect(last?.type === 'error' && last.error.message).toMatch(
      /No server of the pool could answer.*hearth doctor/,
    );
    await expect(resolveConnection(config)).rejects.toThrow(/No server of the pool .* answers.*127\.0\.0\.1/);
  });

  it('holds a server to max_concurrent, and a base_url wins over the pool', async () => {
    const a = await server('A');
    const config = settings([{ url: a.baseUrl, max_concurrent: 1 }]);
    const connection = await resolveConnection(config);
    const release = await connection.pool!.acquire(connection.pool!.endpoints[0]!);
    const client = createClient(connection, config);
    let answered = false;
    const pending = ask(client).then((r) => {
      answered = true;
      return r;
    });
    await waitUntil(
      () => connection.pool!.endpoints[0]!.waiting.length === 1,
      'the request to wait for a free place',
    );
    expect(answered).toBe(false);
    expect(a.requests).toHaveLength(0);
    release!();
    expect((await pending).text).toMatch(/^A/);

    const single = await resolveConnection(
      settings([{ url: 'http://127.0.0.1:9/v1' }], { base_url: a.baseUrl }),
    );
    expect(single.pool).toBeUndefined();
  });
});
