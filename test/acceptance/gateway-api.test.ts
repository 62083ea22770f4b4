import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { readSse, type WireMessage } from '../support/gateway.js';
import { reply } from '../support/scripted-server.js';
import { withDeadline } from '../support/wait.js';
import { collect, type ServedGateway, startServe } from './support.js';

/** An answer, read field by field: the assertions check it, not the types. */
// biome-ignore lint/suspicious/noExplicitAny: the gateway's answers are checked by the assertions below.
type Json = Record<string, any>;

/**
 * Every operation of the installed gateway's OpenAPI document, called through `hearth serve` as a
 * script or a phone app would, each answer checked for what it should say. The last test checks
 * that no documented operation was left out.
 */
describe('the installed gateway API, operation by operation', () => {
  const cli = useCliHarness('acc-api');
  /** `METHOD /path` of every call made here. */
  const used: string[] = [];
  let documented: string[] = [];

  /** The gateway's calls, each remembered for the check at the end. */
  function api(gw: ServedGateway) {
    const http = (path: string, init: RequestInit = {}) => {
      used.push(`${(init.method ?? 'GET').toUpperCase()} ${path.split('?')[0]}`);
      return gw.http(path, init);
    };
    /** JSON in and out; fails unless the status is `status` (any 2xx when unset). */
    const call = async <T = Json>(method: string, path: string, body?: unknown, status?: number) => {
      const response = await http(path, {
        method,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      const ok = status === undefined ? response.ok : response.status === status;
      if (!ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      return (text ? JSON.parse(text) : undefined) as T;
    };
    return {
      http,
      get: <T = Json>(path: string, status?: number) => call<T>('GET', path, undefined, status),
      post: <T = Json>(path: string, body: unknown = {}, status?: number) =>
        call<T>('POST', path, body, status),
      patch: <T = Json>(path: string, body: unknown, status?: number) => call<T>('PATCH', path, body, status),
      del: <T = Json>(path: string, status?: number) => call<T>('DELETE', path, undefined, status),
      socket: async (path: string) => {
        used.push(`GET ${path.split('?')[0]}`);
        return collect((onMessage) => gw.socket(path, onMessage));
      },
      /** Server-sent events from `path` until `stop` says so. */
      sse: async (path: string, stop: (event: WireMessage) => boolean) =>
        (await readSse(await http(path), (e) => stop(e.data))).map((e) => e.data),
    };
  }

  it('describes itself, says it is up, and names its model, status and usage', async () => {
    await cli.serve({
      turns: [reply().text('Answered by the other model.')],
      models: ['scripted-model', 'other-model'],
    });
    const gw = await startServe(cli, ['--no-scheduler']);
    const { get, post } = api(gw);
    const doc = await gw.openApi();
    documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.length).toBeGreaterThan(40);

    const version = (await cli.run(['--version'])).stdout.trim();
    expect(await get('/api/health')).toEqual({ status: 'ok', version: expect.any(String) });
    expect(version).toContain((await get('/api/health')).version);

    const status = await get('/api/status');
    expect(status).toMatchObject({ status: 'ok', workspace: cli.workspace, sessions: 0, running: 0 });
    expect(status.tools).toEqual(expect.arrayContaining(['read_file', 'write_file', 'shell']));
    expect(status.permission_mode).toBe('normal');

    const models = await get('/api/models');
    expect(models).toMatchObject({ current: { model_id: 'scripted-model' }, reachable: true });
    expect(models.models.map((m: Json) => m.id)).toEqual(['scripted-model', 'other-model']);

    const switched = await post('/api/models/select', { model_id: 'other-model' });
    expect(switched).toMatchObject({ status: 'ok', model_id: 'other-model' });
    expect(switched.context_window).toBeGreaterThan(0);
    const turn = await post('/api/chat/on-other', { message: 'who answers?' });
    expect(turn).toMatchObject({
      text: 'Answered by the other model.',
      reason: 'completed',
      model: 'other-model',
    });
    expect((cli.server.requests.at(-1)!.body as Json).model).toBe('other-model');
    expect(await get('/api/status')).toMatchObject({ model: 'other-model', sessions: 1, running: 0 });
    expect(await get('/api/models')).toMatchObject({ current: { model_id: 'other-model' } });
    expect(await post('/api/models/select', { model_id: 'scripted-model' })).toMatchObject({
      model_id: 'scripted-model',
    });
    expect(await get('/api/models')).toMatchObject({ current: { model_id: 'scripted-model' } });

    const usage = await get('/api/usage?range=today');
    expect(usage.range).toBe('today');
    expect(usage.total.api_calls).toBe(1);
    expect(usage.sessions).toEqual([expect.objectContaining({ session_id: 'on-other', api_calls: 1 })]);
    expect(usage.models).toEqual([expect.objectContaining({ model: 'other-model', api_calls: 1 })]);
  });

  it('runs and shows sessions: chat, messages, approvals, history, tasks, files, streams, fork, mode, abort, compact, delete', async () => {
    await writeFile(join(cli.workspace, 'notes.txt'), 'The kiln fires at dawn.\n');
    await writeFile(
      join(cli.workspace, 'big.log'),
      `${'a long line of the build log, '.repeat(4)}\n`.repeat(150),
    );
    await cli.serve([
      // 1. a blocking chat that writes a todo list
      reply().tool('todo_write', {
        todos: [
          { id: '1', text: 'Read notes.txt', status: 'in_progress' },
          { id: '2', text: 'Answer', status: 'pending' },
        ],
      }),
      reply().text('Two steps planned.'),
      // 2. a streamed chat: one call that works, one that fails
      reply().tool('read_file', { path: 'notes.txt' }).tool('read_file', { path: 'missing.txt' }),
      reply().text('The kiln fires at dawn.'),
      // 3. a message whose write waits for approval
      reply().tool('write_file', { path: 'out.txt', content: 'dawn\n' }),
      reply().text('Written.'),
      // 4. over the WebSocket
      reply().text('Hello over the socket.'),
      // 5. a slow answer, stopped
      reply().text('slowly, slowly, slowly').chunkSize(2).holdAfter(1),
      // 6. a long session, then compacted by a summary
      reply().tool('read_file', { path: 'big.log' }),
      reply().text('It is a long build log.'),
      reply().text('Nothing else in it.'),
      reply().text('Summary: the user had big.log read; it is a long build log.'),
    ]);
    const gw = await startServe(cli, ['--no-scheduler']);
    const { get, post, del, http, socket, sse } = api(gw);

    const created = await post('/api/sessions', { id: 's-api', title: 'API walk' }, 201);
    expect(created).toMatchObject({
      id: 's-api',
      title: 'API walk',
      workspace: cli.workspace,
      running: false,
    });
    expect((await post('/api/sessions', { id: 's-api' }, 409)).detail).toMatch(/exists/);

    // The activity feed, over the WebSocket and as server-sent events, watched from here on (the
    // calls of the second turn below are looked for: both watch by then).
    const activity = await socket('/ws/activity');
    const failedRead = (e: WireMessage) =>
      e.type === 'tool_result' && e.tool === 'read_file' && e.success === false;
    const feed = sse('/api/events', failedRead);

    // 1. A blocking chat, with a todo list.
    const first = await post('/api/chat/s-api', { message: 'plan it' });
    expect(first).toMatchObject({
      session_id: 's-api',
      text: 'Two steps planned.',
      reason: 'completed',
      iterations: 2,
    });
    expect(first.usage.total_tokens).toBeGreaterThan(0);
    const recent = await get('/api/activity?limit=10');
    expect(recent.events[0]).toMatchObject({ type: 'tool_result', tool: 'todo_write', session_id: 's-api' });

    const todos = await get('/api/sessions/s-api/todos');
    expect(todos.todos.map((t: Json) => [t.text, t.status])).toEqual([
      ['Read notes.txt', 'in_progress'],
      ['Answer', 'pending'],
    ]);
    const tasks = await get('/api/sessions/s-api/tasks');
    expect(tasks).toMatchObject({
      mode: 'bounded',
      plan: null,
      summary: expect.stringContaining('0/2 done'),
    });

    // 2. A chat streamed as server-sent events.
    const events = (
      await readSse(
        await http('/api/chat/s-api?stream=sse', {
          method: 'POST',
          body: JSON.stringify({ message: 'read them' }),
        }),
        (e) => e.data.type === 'done',
      )
    ).map((e) => e.data);
    expect(events[0]).toMatchObject({ type: 'user_message', text: 'read them' });
    const results = events.filter((e) => e.type === 'tool_result');
    expect(results.map((e) => [e.tool, e.success])).toEqual([
      ['read_file', true],
      ['read_file', false],
    ]);
    expect(events.at(-1)).toMatchObject({
      type: 'done',
      reason: 'completed',
      text: 'The kiln fires at dawn.',
    });
    const fed = await withDeadline(feed, 'the failed read on GET /api/events');
    expect(fed.filter((e) => e.tool === 'read_file').map((e) => e.type)).toEqual([
      'tool_call',
      'tool_call',
      'tool_result',
      'tool_result',
    ]);
    expect(await activity.next(failedRead)).toMatchObject({ session_id: 's-api' });

    // 3. A message that does not wait; its write waits for approval, answered over REST.
    const before = (await get('/api/sessions/s-api')).last_seq as number;
    const accepted = await post('/api/sessions/s-api/messages', { message: 'write it down' }, 202);
    expect(accepted).toMatchObject({ session_id: 's-api', status: 'running', position: 0 });
    const asked = await sse(
      `/api/sessions/s-api/events?since=${before}`,
      (e) => e.type === 'approval_request',
    );
    const request = asked.at(-1)!;
    expect(request).toMatchObject({ tool: 'write_file', input: { path: 'out.txt', content: 'dawn\n' } });
    expect((await get('/api/sessions/s-api')).waiting).toEqual([request.tool_call_id]);
    const answered = await post(`/api/sessions/s-api/approvals/${request.tool_call_id}`, {
      decision: 'once',
    });
    expect(answered).toEqual({ session_id: 's-api', tool_call_id: request.tool_call_id, decision: 'once' });
    const rest = await sse(`/api/sessions/s-api/events?since=${request.seq}`, (e) => e.type === 'done');
    expect(rest.map((e) => e.type)).toContain('approval_resolved');
    expect(rest.at(-1)).toMatchObject({ type: 'done', text: 'Written.' });
    expect(await readFile(join(cli.workspace, 'out.txt'), 'utf8')).toBe('dawn\n');
    await post(`/api/sessions/s-api/approvals/${request.tool_call_id}`, { decision: 'deny' }, 404);

    // The stored history: what each person wrote, and how each call ended.
    const history = await get('/api/sessions/s-api/history');
    expect(history.session_id).toBe('s-api');
    expect(history.messages.filter((m: Json) => m.role === 'user').map((m: Json) => m.text)).toEqual([
      'plan it',
      'read them',
      'write it down',
    ]);
    expect(history.messages.filter((m: Json) => m.role === 'tool').map((m: Json) => m.success)).toEqual([
      true,
      true,
      false,
      true,
    ]);
    expect(history.token_usage.api_calls).toBe(6);

    // The workspace, read-only.
    const folder = await get('/api/sessions/s-api/files');
    expect(folder.entries.map((e: Json) => e.name)).toEqual(expect.arrayContaining(['notes.txt', 'out.txt']));
    expect(await get('/api/sessions/s-api/files/content?path=notes.txt')).toMatchObject({
      path: 'notes.txt',
      content: 'The kiln fires at dawn.\n',
      truncated: false,
    });
    const outside = await get('/api/sessions/s-api/files/content?path=../outside.txt', 400);
    expect(outside.detail).toMatch(/inside the workspace/);
    await writeFile(join(cli.workspace, '.env'), 'API_KEY=secret\n');
    const secret = await get('/api/sessions/s-api/files/content?path=.env', 403);
    expect(JSON.stringify(secret)).not.toContain('API_KEY=secret');

    // 4. Over the session's WebSocket: a new session made by its first message.
    const ws = await socket('/ws/s-ws?since=0');
    expect(await ws.next((m) => m.type === 'connected')).toMatchObject({ session_id: 's-ws', exists: false });
    ws.send({ type: 'message', content: 'hello?' });
    expect(await ws.next((m) => m.type === 'done')).toMatchObject({ text: 'Hello over the socket.' });
    ws.ws.close();

    // The mode, for the next turns.
    expect(await post('/api/sessions/s-api/mode', { mode: 'deep_work' })).toEqual({
      session_id: 's-api',
      mode: 'deep_work',
    });
    expect(await get('/api/sessions/s-api')).toMatchObject({
      mode: 'deep_work',
      running: false,
      waiting: [],
    });
    expect((await get('/api/sessions/s-api/tasks')).mode).toBe('deep_work');
    await post('/api/sessions/s-api/mode', { mode: 'bounded' });

    // 5. Stopping a running turn.
    const watch = await socket(`/ws/s-api?since=${(await get('/api/sessions/s-api')).last_seq}`);
    await post('/api/sessions/s-api/messages', { message: 'take your time' }, 202);
    await cli.server.waitForHolds(1);
    expect(await post('/api/sessions/s-api/abort')).toEqual({ session_id: 's-api', aborted: true });
    expect(await watch.next((m) => m.type === 'done')).toMatchObject({ reason: 'aborted' });
    expect(await post('/api/sessions/s-api/abort')).toEqual({ session_id: 's-api', aborted: false });
    watch.ws.close();

    // A fork: the same history in a new session, which goes when deleted.
    const fork = await post('/api/sessions/s-api/fork', {}, 201);
    expect(fork).toMatchObject({ parent_id: 's-api', workspace: cli.workspace });
    const forked = await get(`/api/sessions/${fork.id}/history`);
    expect(forked.messages).toEqual((await get('/api/sessions/s-api/history')).messages);
    const listed = await get('/api/sessions?limit=10');
    expect(listed.sessions.map((s: Json) => s.id)).toEqual(
      expect.arrayContaining(['s-api', 's-ws', fork.id]),
    );
    expect(await del(`/api/sessions/${fork.id}`)).toEqual({ status: 'deleted', session_id: fork.id });
    await get(`/api/sessions/${fork.id}`, 404);

    // 6. Compaction on demand: the older part summarized by the model.
    await post('/api/chat/s-big', { message: 'read big.log' });
    await post('/api/chat/s-big', { message: 'anything else?' });
    const compacted = await post('/api/sessions/s-big/compact');
    expect(compacted).toMatchObject({ session_id: 's-big', method: 'summary' });
    expect(compacted.after).toBeLessThan(compacted.before);
    expect(JSON.stringify(cli.server.requests.at(-1)!.body)).toContain('a long line of the build log');
    activity.ws.close();
  });

  it('keeps, finds, exports and forgets memories, and reviews what reflection proposed', async () => {
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(join(cli.hearthHome, 'config.json'), JSON.stringify({ memory: { reflect: 'off' } }));
    await cli.serve([
      reply().text('Noted: make builds it.'),
      reply().text(
        JSON.stringify({
          knowledge: [
            { text: 'The project builds with make', kind: 'fact', scope: 'project', message: 1 },
            { text: 'The user likes tabs', kind: 'preference', scope: 'user', message: 1 },
          ],
          learnings: [],
          skills: [],
        }),
      ),
    ]);
    const ran = await cli.run(['we build with make; I like tabs']);
    const id = /session (\w+) · continue/.exec(ran.stderr)?.[1];
    expect(id, ran.stderr).toBeDefined();
    expect((await cli.run(['memory', 'reflect', id!])).stdout).toContain('2 proposed');

    const gw = await startServe(cli, ['--no-scheduler']);
    const { get, post, patch, del } = api(gw);
    const kept = await post(
      '/api/memory',
      { text: 'Releases are tagged by scripts/tag.sh', kind: 'fact' },
      201,
    );
    expect(kept).toMatchObject({
      duplicate: false,
      memory: { text: 'Releases are tagged by scripts/tag.sh', origin: 'user', scope: 'project' },
    });
    const again = await post(
      '/api/memory',
      { text: 'Releases are tagged by scripts/tag.sh', kind: 'fact' },
      200,
    );
    expect(again).toMatchObject({ duplicate: true, memory: { id: kept.memory.id } });

    const listed = await get('/api/memory');
    expect(listed).toMatchObject({ workspace: cli.workspace, pending_proposals: 2 });
    expect(listed.memories.map((m: Json) => m.text)).toContain('Releases are tagged by scripts/tag.sh');
    const found = await get('/api/memory/search?query=tagged%20releases');
    expect(found.memories[0]).toMatchObject({ id: kept.memory.id, score: expect.any(Number) });
    expect(found.keyword_only).toBe(true);
    const markdown = await (await api(gw).http('/api/memory/export')).text();
    expect(markdown).toContain('Releases are tagged by scripts/tag.sh');
    const exported = await get('/api/memory/export?format=json');
    expect(exported.memories.map((m: Json) => m.id)).toContain(kept.memory.id);

    const { proposals } = await get('/api/memory/proposals');
    expect(proposals.map((p: Json) => [p.text, p.status, p.session_id])).toEqual([
      ['The project builds with make', 'pending', id],
      ['The user likes tabs', 'pending', id],
    ]);
    const [build, tabs] = proposals as Json[];
    const edited = await patch(`/api/memory/proposals/${build!.id}`, {
      text: 'The project builds with make all',
    });
    expect(edited).toMatchObject({
      id: build!.id,
      text: 'The project builds with make all',
      status: 'pending',
    });
    const accepted = await post(`/api/memory/proposals/${build!.id}/accept`);
    expect(accepted).toMatchObject({
      status: 'accepted',
      memory: { text: 'The project builds with make all', origin: 'reflection', session_id: id },
    });
    const rejected = await post(`/api/memory/proposals/${tabs!.id}/reject`);
    expect(rejected).toMatchObject({ status: 'rejected', proposal: { id: tabs!.id, status: 'rejected' } });
    await post(`/api/memory/proposals/${tabs!.id}/accept`, {}, 409);
    expect((await get('/api/memory/proposals')).proposals).toEqual([]);

    expect(await del(`/api/memory/${kept.memory.id}`)).toMatchObject({
      status: 'forgotten',
      memory: { id: kept.memory.id },
    });
    await del(`/api/memory/${kept.memory.id}`, 404);
    const left = (await get('/api/memory')).memories.map((m: Json) => m.text);
    expect(left).toEqual(['The project builds with make all']);
  });

  it('lists, runs, switches and reloads scheduled jobs, and queues inbox tasks', async () => {
    const job = (id: string, prompt: string) => ({
      id,
      name: `Job ${id}`,
      // 29 February: never during a test run.
      schedule: '0 0 29 2 *',
      timezone: 'UTC',
      prompt,
      workspace: cli.workspace,
    });
    await mkdir(cli.hearthHome, { recursive: true });
    const cronFile = join(cli.hearthHome, 'cron.json');
    await writeFile(cronFile, JSON.stringify([job('notes', 'Summarise the notes.')]));
    await cli.serve([reply().text('The notes are summarised.')]);
    const gw = await startServe(cli, ['--no-scheduler']);
    const { get, post } = api(gw);

    const listed = await get('/api/cron');
    expect(listed.problems).toEqual([]);
    expect(listed.scheduler.running).toBe(false);
    expect(listed.jobs).toEqual([
      expect.objectContaining({
        id: 'notes',
        enabled: true,
        run_count: 0,
        source: cronFile,
        next_run: expect.stringMatching(/-02-29 00:00:00 UTC$/),
      }),
    ]);

    const ran = await post('/api/cron/notes/run');
    expect(ran).toMatchObject({
      status: 'ok',
      job: 'notes',
      run_count: 1,
      run: { kind: 'manual', status: 'ok' },
    });
    const history = await get(`/api/sessions/${ran.run.session_id}/history`);
    expect(history.messages.map((m: Json) => m.text ?? m.content)).toEqual(
      expect.arrayContaining(['Summarise the notes.', 'The notes are summarised.']),
    );
    const runs = await get('/api/cron/notes/runs');
    expect(runs.runs.map((r: Json) => [r.kind, r.status, r.session_id])).toEqual([
      ['manual', 'ok', ran.run.session_id],
    ]);
    await get('/api/cron/nope/runs', 404);

    expect(await post('/api/cron/notes/toggle')).toEqual({
      status: 'disabled',
      job: 'notes',
      enabled: false,
    });
    expect((await get('/api/cron')).jobs[0].enabled).toBe(false);
    expect(await post('/api/cron/notes/toggle')).toEqual({ status: 'enabled', job: 'notes', enabled: true });

    await writeFile(
      cronFile,
      JSON.stringify([job('notes', 'Summarise the notes.'), job('tidy', 'Tidy up.')]),
    );
    expect(await post('/api/cron/reload')).toEqual({ status: 'reloaded', jobs_loaded: 2, problems: [] });
    expect((await get('/api/cron')).jobs.map((j: Json) => j.id).sort()).toEqual(['notes', 'tidy']);

    const queued = await post('/api/inbox', { task: 'Water the plants.' }, 202);
    expect(queued).toMatchObject({ status: 'queued', scheduler_running: false });
    const inbox = await get('/api/inbox');
    expect(inbox.dir).toBe(queued.dir);
    expect(inbox.waiting.map((t: Json) => t.name)).toEqual([queued.name]);
    expect(await readFile(join(queued.dir, queued.name), 'utf8')).toContain('Water the plants.');
    expect((await post('/api/inbox', { task: 'x', workspace: 'relative/path' }, 400)).detail).toMatch(
      /absolute/,
    );
  });

  it('pauses and resumes the pipeline, each recorded as an event', async () => {
    await cli.serve([]);
    const gw = await startServe(cli, ['--no-scheduler']);
    const { get, post } = api(gw);
    expect(await get('/api/pipeline')).toMatchObject({ workspace: cli.workspace, paused: false, plans: [] });
    expect(await post('/api/pipeline/pause')).toEqual({ paused: true, changed: true });
    expect(await post('/api/pipeline/pause')).toEqual({ paused: true, changed: false });
    expect((await get('/api/pipeline')).paused).toBe(true);
    expect(await post('/api/pipeline/resume')).toEqual({ paused: false, changed: true });
    const { events } = await get('/api/pipeline/events');
    expect(events.map((e: Json) => e.event.type)).toEqual(['paused', 'resumed']);
    const after = await get(`/api/pipeline/events?since=${events[0].id}`);
    expect(after.events.map((e: Json) => e.event.type)).toEqual(['resumed']);
  });

  it("lists projects and kept evaluations, and a session's turns, with a rewind of none refused", async () => {
    await cli.serve([]);
    const gw = await startServe(cli, ['--no-scheduler']);
    const { get, post } = api(gw);
    // Each is tried in full in its own file (projects, eval, rewind); here: that it answers.
    expect(await get('/api/projects')).toMatchObject({ projects: [] });
    expect(await get('/api/evals')).toEqual({ runs: [] });
    await get('/api/evals/nosuchrun', 404);
    await post('/api/sessions', { id: 's-turns' }, 201);
    expect(await get('/api/sessions/s-turns/turns')).toEqual({ turns: [] });
    await post('/api/sessions/s-turns/rewind', { to: 1 }, 400);
  });

  it('trades the token for a cookie that logs a browser in, until it logs out', async () => {
    await cli.serve([]);
    const gw = await startServe(cli, ['--no-scheduler']);
    const { http } = api(gw);
    const asBrowser = (cookie?: string) =>
      fetch(`${gw.url}/api/status`, cookie ? { headers: { cookie } } : {}).then((r) => r.status);
    expect(await asBrowser()).toBe(401);

    const wrong = await http('/api/auth/login', {
      method: 'POST',
      body: JSON.stringify({ token: 'not-the-token' }),
    });
    expect(wrong.status).toBe(401);
    const login = await http('/api/auth/login', {
      method: 'POST',
      body: JSON.stringify({ token: gw.token }),
    });
    expect(await login.json()).toEqual({ ok: true });
    const setCookie = login.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    const cookie = setCookie.split(';')[0]!;
    expect(await asBrowser(cookie)).toBe(200);

    const logout = await http('/api/auth/logout', { method: 'POST', headers: { cookie } });
    expect(await logout.json()).toEqual({ ok: true });
    expect(await asBrowser(cookie)).toBe(401);
  });

  it('left no operation of the OpenAPI document unused', () => {
    expect(documented.length).toBeGreaterThan(0);
    const pattern = (operation: string) =>
      new RegExp(`^${operation.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
    const missing = documented.filter((operation) => !used.some((call) => pattern(operation).test(call)));
    expect(missing).toEqual([]);
  });
});
