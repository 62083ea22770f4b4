/**
 * `hearth serve` shows work that runs elsewhere, live: a `hearth worker` (its own home and session
 * database, as on another machine) runs a queued task; the gateway, sharing only the PostgreSQL
 * database, streams the task's events to a WebSocket client as they happen, in order and once,
 * puts its tool calls on the activity feed, and refuses to take orders for it.
 */

import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, startCli } from '../support/cli.js';
import { openSocket, readSse, type TestSocket, type WireMessage } from '../support/gateway.js';
import { machineEnv, postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { queueAt } from '../support/storage.js';
import { waitUntil } from '../support/wait.js';
import { untilServing } from '../support/workers.js';

const TOKEN = 'live-events-token-0123456789';

describe.skipIf(!postgresBin())('hearth serve streams a worker’s session from the shared database', () => {
  let db: TestPostgres;
  let llm: ScriptedServer;
  let workspace: string;
  const dirs: string[] = [];
  const running: CliRun[] = [];
  const sockets: TestSocket[] = [];

  beforeAll(async () => {
    db = await startPostgres();
    llm = await startScriptedServer({
      models: ['scripted-model'],
      turns: [
        reply().tool('read_file', { path: 'notes.txt' }),
        // Held after its first chunks, so the gateway's client joins while the worker is mid-answer.
        reply().text('The notes say the kettle is on.').chunkSize(6).holdAfter(2),
      ],
    });
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'hearth-live-ws-')));
    writeFileSync(join(workspace, 'notes.txt'), 'the kettle is on\n');
  }, 60_000);

  afterAll(async () => {
    for (const socket of sockets) socket.ws.terminate();
    for (const run of running) run.child.kill('SIGKILL');
    await Promise.all(running.map((run) => run.result));
    await llm?.close();
    await db?.stop();
    for (const dir of [workspace, ...dirs]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A process as on its own machine: its own Hearth home and session database. */
  function start(args: string[]): CliRun {
    const home = mkdtempSync(join(tmpdir(), 'hearth-live-home-'));
    dirs.push(home);
    const run = startCli(args, { cwd: workspace, env: machineEnv(home, db.url, llm.baseUrl) });
    running.push(run);
    return run;
  }

  async function serve(): Promise<string> {
    const run = start(['serve', '--port', '0', '--token', TOKEN, '--no-scheduler']);
    return untilServing(run);
  }

  async function socket(url: string, path: string): Promise<TestSocket> {
    const opened = await openSocket(`${url.replace(/^http/, 'ws')}${path}`, {
      authorization: `Bearer ${TOKEN}`,
    });
    sockets.push(opened);
    return opened;
  }

  it('a WebSocket client on the gateway sees the worker’s events live, in order, once', async () => {
    const url = await serve();
    const activity = await socket(url, '/ws/activity');

    const queue = await queueAt(db.url);
    const key = await queue.add({ task: 'What do the notes say?', workspace, tags: [] });
    await queue.close();
    start(['worker', '--lease', '5']);

    // The worker's tool call reaches the gateway's activity feed, naming the session it ran in.
    const call = await activity.next((m) => m.type === 'tool_call');
    const sessionId = String(call.session_id);
    expect(call).toMatchObject({ tool: 'read_file' });
    await activity.next((m) => m.type === 'tool_result' && m.session_id === sessionId);

    await llm.waitForHolds(1);
    const client = await socket(url, `/ws/${sessionId}?since=0`);
    const hello = await client.next((m) => m.type === 'connected');
    expect(hello).toMatchObject({ session_id: sessionId, exists: true });
    expect(String(hello.runs_at)).toMatch(/^hearth worker on /);
    // What happened before it joined is replayed from the shared log.
    await client.next((m) => m.type === 'text');
    const beforeRelease = client.messages.filter((m) => m.seq !== undefined).length;

    // The session takes no orders here: it runs in the worker.
    client.send({ type: 'message', content: 'stop that' });
    const refused = await client.next((m) => m.type === 'error');
    expect(String(refused.message)).toMatch(/runs in hearth worker on .*watched here/);
    const post = await fetch(`${url}/api/chat/${sessionId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'stop that' }),
    });
    expect(post.status).toBe(409);

    llm.release();
    const done = await client.next((m) => m.type === 'done');
    expect(done).toMatchObject({ reason: 'completed', model: 'scripted-model' });
    const events = client.messages.filter((m): m is WireMessage & { seq: number } => m.seq !== undefined);
    // Live: events the worker stored after the client joined came to it as they happened.
    expect(events.length).toBeGreaterThan(beforeRelease);
    expect(events.slice(beforeRelease).some((m) => m.type === 'text')).toBe(true);
    // In order and once: 1, 2, 3, ... with nothing missing or repeated.
    expect(events.map((m) => m.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]).toMatchObject({ type: 'user_message', text: 'What do the notes say?' });
    const types = events.map((m) => m.type);
    expect(types.filter((t) => t === 'done')).toHaveLength(1);
    expect(types.indexOf('tool_call')).toBeLessThan(types.indexOf('tool_result'));
    const text = events.filter((m) => m.type === 'text').map((m) => m.text);
    expect(text.join('')).toBe('The notes say the kettle is on.');

    // The history of the activity feed holds the worker's calls too.
    const history = await fetch(`${url}/api/activity`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const feed = (await history.json()) as { events: Array<{ session_id: string; type: string }> };
    expect(feed.events.filter((e) => e.session_id === sessionId).map((e) => e.type)).toEqual([
      'tool_result',
      'tool_call',
    ]);

    // The same stream over SSE, replayed from the shared log.
    const sse = await fetch(`${url}/api/sessions/${sessionId}/events?since=0`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const streamed = await readSse(sse, (e) => e.data.type === 'done');
    expect(streamed.map((e) => e.data)).toEqual(events);

    // A client that reconnects after the end gets the rest from where it was, none twice.
    const again = await socket(url, `/ws/${sessionId}?since=${beforeRelease}`);
    await again.next((m) => m.type === 'done');
    expect(again.messages.filter((m) => m.seq !== undefined)).toEqual(events.slice(beforeRelease));
    await waitUntil(async () => {
      const check = await queueAt(db.url);
      try {
        return (await check.view()).done.some((r) => r.key === key);
      } finally {
        await check.close();
      }
    }, 'the task’s result');
  }, 120_000);
});
