import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/index.js';
import { startGateway, type TestGateway, type WireMessage } from '../support/gateway.js';
import { reply, startScriptedServer } from '../support/scripted-server.js';

let gw: TestGateway | undefined;
const agents: Agent[] = [];
/** The library Agent on the gateway's database and model server, as the terminal would run it. */
function terminalAgent(gateway: TestGateway, options: { sessionId?: string } = {}): Agent {
  const agent = new Agent({
    baseUrl: gateway.llm.baseUrl,
    model: 'scripted-model',
    dbPath: gateway.dbPath,
    sandbox: 'none',
    contextWindow: 32_000,
    ...(options.sessionId ? { sessionId: options.sessionId } : { workspace: gateway.workspace }),
  });
  agents.push(agent);
  return agent;
}
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
  await gw?.close();
  gw = undefined;
});

type Json = Record<string, unknown>;
const lastUserText = (gateway: TestGateway, n: number) =>
  (gateway.llm.requests[n]!.body.messages as Array<{ role: string; content: string }>)
    .filter((m) => m.role === 'user')
    .at(-1)!.content;

describe('the agent_computer endpoints', () => {
  it('chat, status, sessions, history, tasks, activity and delete answer as the seed documents them', async () => {
    gw = await startGateway([
      reply().tool('todo_write', { todos: [{ text: 'look around', status: 'in_progress' }] }),
      reply().tool('list_dir', { path: '.' }),
      reply().text('Nothing here.'),
    ]);
    const chat = await gw.json('/api/chat/my-session', { message: 'List the files in my workspace' });
    expect(chat).toEqual({
      session_id: 'my-session',
      text: 'Nothing here.',
      response: 'Nothing here.',
      iterations: 3,
      model: 'scripted-model',
      usage: {
        prompt_tokens: expect.any(Number),
        completion_tokens: expect.any(Number),
        total_tokens: expect.any(Number),
      },
      mode: 'bounded',
      reason: 'completed',
    });

    const status = await gw.json('/api/status');
    expect(status).toMatchObject({ status: 'ok', model: 'scripted-model', sessions: 1, running: 0 });
    expect(status.tools).toContain('read_file');

    const { sessions } = await gw.json<{ sessions: Json[] }>('/api/sessions');
    expect(sessions).toEqual([
      expect.objectContaining({
        session_id: 'my-session',
        preview: 'List the files in my workspace',
        workspace: gw.workspace,
        status: 'completed',
        running: false,
        token_usage: expect.objectContaining({ total_tokens: expect.any(Number) }),
      }),
    ]);

    const history = await gw.json<{ messages: Json[]; token_usage: Json }>(
      '/api/sessions/my-session/history',
    );
    expect(history.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(history.token_usage).toMatchObject({ api_calls: 3 });

    const tasks = await gw.json('/api/sessions/my-session/tasks');
    expect(tasks).toMatchObject({
      mode: 'bounded',
      tasks: [{ text: 'look around', status: 'in_progress' }],
      plan: null,
    });
    expect(await gw.json('/api/sessions/my-session/todos')).toMatchObject({
      todos: [{ text: 'look around' }],
    });

    const { events } = await gw.json<{ events: WireMessage[] }>('/api/activity?limit=3');
    expect(events.map((e) => `${e.type} ${e.tool}`)).toEqual([
      'tool_result list_dir',
      'tool_call list_dir',
      'tool_result todo_write',
    ]);
    expect(events[0]).toMatchObject({
      session_id: 'my-session',
      success: true,
      timestamp: expect.any(Number),
    });

    expect(await gw.json('/api/sessions/my-session', undefined, 'DELETE')).toEqual({
      status: 'deleted',
      session_id: 'my-session',
    });
    const gone = await gw.http('/api/sessions/my-session/history');
    expect(gone.status).toBe(404);
    expect(gone.headers.get('content-type')).toBe('application/problem+json');
    expect(await gone.json()).toMatchObject({ status: 404, detail: 'No session my-session.' });
  });

  it('sends a task_update when a call changes the todo list', async () => {
    gw = await startGateway([
      reply().tool('todo_write', { todos: [{ text: 'step one', status: 'pending' }] }),
      reply().tool('list_dir', { path: '.' }),
      reply().text('Ok.'),
    ]);
    const ws = await gw.socket('/ws/todo1');
    ws.send({ type: 'message', content: 'plan it' });
    await ws.next((m) => m.type === 'done');
    const updates = ws.messages.filter((m) => m.type === 'task_update');
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({
      tasks: [{ text: 'step one', status: 'pending' }],
      summary: expect.stringContaining('0/1 done'),
    });
  });

  it('sums usage over today, 7 days, 30 days and all time by the injected clock', async () => {
    let clock = Date.now();
    gw = await startGateway([reply().text('Hi.').usage({ prompt: 100, completion: 7 })], {
      gateway: { now: () => clock },
    });
    await gw.json('/api/chat/u1', { message: 'hello' });
    const total = async (range: string) =>
      (await gw!.json<{ total: Json }>(`/api/usage?range=${range}`)).total;
    const spent = { prompt_tokens: 100, completion_tokens: 7, total_tokens: 107, api_calls: 1 };
    const none = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, api_calls: 0 };
    expect(await total('today')).toEqual(spent);
    clock += 2 * 86_400_000;
    expect(await total('today')).toEqual(none);
    expect(await total('7d')).toEqual(spent);
    clock += 8 * 86_400_000;
    expect(await total('7d')).toEqual(none);
    expect(await total('30d')).toEqual(spent);
    clock += 30 * 86_400_000;
    expect(await total('30d')).toEqual(none);
    expect(await total('all')).toEqual(spent);
    const report = await gw.json<{ sessions: Json[]; models: Json[] }>('/api/usage');
    expect(report.sessions).toEqual([{ session_id: 'u1', preview: 'hello', ...spent }]);
    expect(report.models).toEqual([{ model: 'scripted-model', ...spent }]);
    const bad = await gw.http('/api/usage?range=week');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).detail).toContain('range');
  });

  it('switches the model at run time; later turns use it, and a turn may name its own', async () => {
    gw = await startGateway([reply().text('A.'), reply().text('B.'), reply().text('C.')], {
      models: ['scripted-model', 'other-model', 'third-model'],
    });
    const models = await gw.json('/api/models');
    expect(models).toMatchObject({
      current: { model_id: 'scripted-model', base_url: gw.llm.baseUrl },
      models: [{ id: 'scripted-model' }, { id: 'other-model' }, { id: 'third-model' }],
      reachable: true,
    });
    await gw.json('/api/chat/m1', { message: 'one' });
    const selected = await gw.json('/api/models/select', { provider: 'lmstudio', model_id: 'other-model' });
    expect(selected).toMatchObject({ status: 'ok', model_id: 'other-model', base_url: gw.llm.baseUrl });
    const second = await gw.json('/api/chat/m1', { message: 'two' });
    expect(second.model).toBe('other-model');
    await gw.json('/api/chat/m1', { message: 'three', model: 'third-model' });
    expect(gw.llm.requests.map((r) => r.body.model)).toEqual([
      'scripted-model',
      'other-model',
      'third-model',
    ]);
    expect((await gw.json('/api/models')).current).toMatchObject({ model_id: 'other-model' });

    const unknown = await gw.http('/api/models/select', {
      method: 'POST',
      body: JSON.stringify({ model_id: 'no-such-model-at-all' }),
    });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as Json).detail).toContain('has no model "no-such-model-at-all"');
  });

  it('creates, forks, switches mode and compacts sessions; errors are problem JSON', async () => {
    gw = await startGateway([reply().text('Forked reply.')]);
    const created = await gw.json('/api/sessions', { id: 'base', title: 'Base', mode: 'deep_work' });
    expect(created).toMatchObject({ session_id: 'base', title: 'Base', workspace: gw.workspace });
    const taken = await gw.http('/api/sessions', { method: 'POST', body: JSON.stringify({ id: 'base' }) });
    expect(taken.status).toBe(409);
    const fork = await gw.json('/api/sessions/base/fork', {});
    expect(fork).toMatchObject({ parent_id: 'base', title: 'Base (fork)' });
    expect(await gw.json('/api/sessions/base/mode', { mode: 'bounded' })).toEqual({
      session_id: 'base',
      mode: 'bounded',
    });
    expect((await gw.json('/api/sessions/base')).mode).toBe('bounded');
    expect(await gw.json('/api/sessions/base/compact', {})).toMatchObject({ method: 'none' });
    expect(await gw.json('/api/sessions/base/abort', {})).toEqual({ session_id: 'base', aborted: false });
    expect(await gw.json('/api/health')).toEqual({ status: 'ok', version: expect.any(String) });

    const invalid = await gw.http('/api/chat/base', {
      method: 'POST',
      body: JSON.stringify({ message: '' }),
    });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({
      title: 'Bad Request',
      detail: expect.stringContaining('message'),
    });
    const badId = await gw.http('/api/chat/..%2Fetc', {
      method: 'POST',
      body: JSON.stringify({ message: 'x' }),
    });
    expect(badId.status).toBe(400);
    const notJson = await gw.http('/api/chat/base', {
      method: 'POST',
      body: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    expect(notJson.status).toBe(415);
    expect(await notJson.json()).toMatchObject({ detail: expect.stringContaining('application/json') });
    const noRoute = await gw.http('/api/nothing');
    expect(noRoute.status).toBe(404);
    expect(noRoute.headers.get('content-type')).toBe('application/problem+json');
  });

  it('says the model server is down as a 502 problem, and the session carries on once it is back', async () => {
    gw = await startGateway([]);
    const { port } = gw.llm;
    await gw.llm.close();
    const down = await gw.http('/api/chat/d1', { method: 'POST', body: JSON.stringify({ message: 'hi' }) });
    expect(down.status).toBe(502);
    const problem = (await down.json()) as Json;
    expect(problem).toMatchObject({ status: 502, reason: 'error', session_id: 'd1' });
    expect(problem.detail).toContain('connection refused');

    const back = await startScriptedServer({ port, turns: [reply().text('Back.')] });
    try {
      expect(await gw.json('/api/chat/d1', { message: 'again' })).toMatchObject({ text: 'Back.' });
      const sent = back.requests[0]!.body.messages as Array<{ role: string; content: string }>;
      expect(sent.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['hi', 'again']);
    } finally {
      await back.close();
    }
  });
});

describe('sessions shared with the terminal', () => {
  it('continues a session started by the library over the gateway, and the other way round', async () => {
    gw = await startGateway([
      reply().text('From the CLI.'),
      reply().text('From the gateway.'),
      reply().text('Back again.'),
    ]);
    const first = terminalAgent(gw);
    const started = await first.run('started in the terminal');
    await first.close();

    const listed = await gw.json<{ sessions: Json[] }>('/api/sessions');
    expect(listed.sessions.map((s) => s.session_id)).toContain(started.sessionId);
    const continued = await gw.json(`/api/chat/${started.sessionId}`, {
      message: 'continued over the gateway',
    });
    expect(continued.text).toBe('From the gateway.');
    const sent = gw.llm.requests[1]!.body.messages as Array<{ content: string }>;
    expect(sent.map((m) => m.content)).toContain('started in the terminal');

    const back = terminalAgent(gw, { sessionId: started.sessionId });
    await back.run('and back in the terminal');
    expect(lastUserText(gw, 2)).toBe('and back in the terminal');
    const contents = (gw.llm.requests[2]!.body.messages as Array<{ content: string }>).map((m) => m.content);
    expect(contents).toContain('continued over the gateway');
    expect(contents).toContain('From the gateway.');
  });

  it('carries on a run that paused for approval in the terminal once a client answers', async () => {
    gw = await startGateway([
      reply().tool('write_file', { path: 'p.txt', content: 'paused\n' }),
      reply().text('Resumed and wrote it.'),
    ]);
    const cli = terminalAgent(gw);
    const paused = await cli.run('write p.txt');
    expect(paused.paused).toBe(true);
    await cli.close();

    const ws = await gw.socket(`/ws/${paused.sessionId}`);
    await ws.next((m) => m.type === 'connected');
    await gw.json(`/api/sessions/${paused.sessionId}/approvals/${paused.pending[0]!.id}`, {
      decision: 'once',
    });
    const done = await ws.next((m) => m.type === 'done');
    expect(done.text).toBe('Resumed and wrote it.');
    expect(await readFile(join(gw.workspace, 'p.txt'), 'utf8')).toBe('paused\n');
  });
});
