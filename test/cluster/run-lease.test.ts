/**
 * One writer per conversation across machines: a session's run lease in the shared database (the
 * lease itself is tested over both backends in test/store/run-lease.test.ts), with real processes:
 * a `hearth worker` (its own home, as on another machine) runs a queued task while a gateway sharing the PostgreSQL database refuses to run that session (409,
 * saying where it runs) and shows it read-only; once the worker is done, or was killed and its lease
 * lapsed on the gateway's clock, the gateway runs the session itself.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage } from '../../src/store/storage.js';
import { type CliRun, startCli } from '../support/cli.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { ManualClock } from '../support/manual-clock.js';
import { machineEnv, postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { reply } from '../support/scripted-server.js';
import { queueAt } from '../support/storage.js';
import { waitUntil } from '../support/wait.js';

const TTL = 30_000;

describe.skipIf(!postgresBin())('a gateway and a worker never run one session at once', () => {
  let db: TestPostgres;
  let gw: TestGateway;
  let clock: ManualClock;
  let workspace: string;
  const dirs: string[] = [];
  const running: CliRun[] = [];

  beforeAll(async () => {
    db = await startPostgres();
    workspace = mkdtempSync(join(tmpdir(), 'hearth-lease-ws-'));
    writeFileSync(join(workspace, 'notes.txt'), 'the kettle is on\n');
    clock = new ManualClock(Date.now());
    const config = { storage: db.url };
    const storage = await openStorage(config, { holder: { label: 'the test gateway', clock, ttlMs: TTL } });
    const events = await storage.events({ writer: 'the test gateway' });
    gw = await startGateway(
      [
        // The worker's first task, held mid-answer until the test lets it finish.
        reply().text('Still reading the notes, one moment.').chunkSize(5).holdAfter(2),
        reply().text('The gateway answers now.'),
        // The second task: the worker is killed while it holds this answer.
        reply().text('This answer never ends.').chunkSize(5).holdAfter(2),
        reply().text('Taken over after the lease lapsed.'),
      ],
      { config, gateway: { sessions: storage.sessions, events } },
    );
  }, 60_000);

  afterAll(async () => {
    for (const run of running) run.child.kill('SIGKILL');
    await Promise.all(running.map((run) => run.result));
    await gw?.close();
    await db?.stop();
    for (const dir of [workspace, ...dirs]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function worker(): CliRun {
    const home = mkdtempSync(join(tmpdir(), 'hearth-lease-home-'));
    dirs.push(home);
    const run = startCli(['worker', '--lease', '5'], {
      cwd: workspace,
      env: machineEnv(home, db.url, gw.llm.baseUrl),
    });
    running.push(run);
    return run;
  }

  /** Queues a task and waits until the worker runs it, held by the scripted server; its session id. */
  async function queuedTask(task: string, holds: number): Promise<string> {
    const queue = await queueAt(db.url);
    await queue.add({ task, workspace, tags: [] });
    await queue.close();
    await gw.llm.waitForHolds(holds);
    let id = '';
    await waitUntil(async () => {
      const { sessions } = await gw.json<{ sessions: Array<{ id: string; title: string }> }>('/api/sessions');
      id = sessions.find((s) => s.title === task)?.id ?? '';
      return id !== '';
    }, 'the worker’s session in the shared database');
    return id;
  }

  const send = (id: string, message: string) =>
    gw.http(`/api/chat/${id}`, { method: 'POST', body: JSON.stringify({ message }) });

  it('refuses while the worker runs the session, and runs it once the worker is done', async () => {
    const run = worker();
    const id = await queuedTask('What do the notes say?', 1);

    const refusedPost = await send(id, 'hurry up');
    expect(refusedPost.status).toBe(409);
    expect(((await refusedPost.json()) as { detail: string }).detail).toMatch(
      new RegExp(`Session ${id} runs in hearth worker on .*\\(pid ${run.child.pid}\\)`),
    );
    // Nor deleted from under it.
    expect((await gw.http(`/api/sessions/${id}`, { method: 'DELETE' })).status).toBe(409);
    const watcher = await gw.socket(`/ws/${id}?since=0`);
    const hello = await watcher.next((m) => m.type === 'connected');
    expect(String(hello.runs_at)).toMatch(/^hearth worker on /);

    gw.llm.release();
    // The worker's run ends and gives the lease back: the gateway now runs the session.
    await watcher.next((m) => m.type === 'done');
    await waitUntil(async () => (await send(id, 'and now?')).status === 200, 'the gateway runs the session');
    const messages = await gw.json<{
      messages: Array<{ role: string; content: string }>;
      token_usage: { api_calls: number };
    }>(`/api/sessions/${id}/history`);
    const said = messages.messages.filter((m) => m.role === 'assistant').map((m) => m.content);
    expect(said).toEqual(['Still reading the notes, one moment.', 'The gateway answers now.']);
    // The gateway's token figures are the shared database's: the worker's request counts too.
    expect(messages.token_usage.api_calls).toBe(2);
    const usage = await gw.json<{ total: { api_calls: number }; sessions: Array<{ session_id: string }> }>(
      '/api/usage',
    );
    expect(usage.total.api_calls).toBe(2);
    expect(usage.sessions.map((s) => s.session_id)).toEqual([id]);
    expect((await gw.json<{ sessions: number }>('/api/status')).sessions).toBe(1);
  }, 120_000);

  it('takes over the session of a worker that died once its lease lapsed', async () => {
    const run = running[0]!;
    const id = await queuedTask('Read the notes again', 2);
    run.child.kill('SIGKILL');
    await run.result;

    // The dead worker's lease is still live by the gateway's clock.
    expect((await send(id, 'are you there?')).status).toBe(409);
    // The worker renewed by its own (real) clock until it died: the gateway's clock is moved to
    // now, then past one lease length.
    clock.advance(Math.max(0, Date.now() - clock.now()) + TTL + 1);
    const response = await send(id, 'take over');
    expect(response.status).toBe(200);
    expect(((await response.json()) as { text: string }).text).toBe('Taken over after the lease lapsed.');
  }, 120_000);
});
