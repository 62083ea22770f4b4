/**
 * One writer per conversation across machines: a session's run lease in the shared database.
 * First the lease itself (two holders with their own clocks, taken atomically, renewed, lost,
 * lapsed), then real processes: a `hearth worker` (its own home, as on another machine) runs a
 * queued task while a gateway sharing the PostgreSQL database refuses to run that session (409,
 * saying where it runs) and shows it read-only; once the worker is done, or was killed and its lease
 * lapsed on the gateway's clock, the gateway runs the session itself.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkQueue } from '../../src/cluster/work-queue.js';
import { openEventLog } from '../../src/store/open-event-log.js';
import { refused } from '../../src/store/run-lease.js';
import { openStorage, type PostgresStorage, type Storage } from '../../src/store/storage.js';
import { type CliRun, startCli } from '../support/cli.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { ManualClock } from '../support/manual-clock.js';
import { machineEnv, postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { reply } from '../support/scripted-server.js';
import { waitUntil } from '../support/wait.js';

const TTL = 30_000;

describe.skipIf(!postgresBin())('the run lease of a session in PostgreSQL', () => {
  let db: TestPostgres;
  const opened: Storage[] = [];

  beforeAll(async () => {
    db = await startPostgres();
  }, 60_000);

  afterAll(async () => {
    for (const storage of opened) await storage.close();
    await db?.stop();
  });

  async function holder(label: string, clock: ManualClock): Promise<PostgresStorage> {
    const storage = (await openStorage(
      { storage: db.url },
      { holder: { label, clock, ttlMs: TTL } },
    )) as PostgresStorage;
    opened.push(storage);
    return storage;
  }

  it('is taken by one holder at a time, renewed while held, and taken over once it lapsed', async () => {
    const [clockA, clockB] = [new ManualClock(), new ManualClock()];
    const a = await holder('process A', clockA);
    const b = await holder('process B', clockB);
    const row = await a.sessions.create({ workspace: '/w' });

    const taken = await a.sessions.leases.take(row.id);
    if (refused(taken)) throw new Error(`refused: ${taken.heldBy}`);
    expect(await b.sessions.leases.take(row.id)).toEqual({ heldBy: 'process A' });
    expect(await b.sessions.leases.heldElsewhere(row.id)).toBe('process A');
    expect(await a.sessions.leases.heldElsewhere(row.id)).toBeUndefined();
    // Within one holder a session runs once at a time too.
    expect(refused(await a.sessions.leases.take(row.id))).toBe(true);

    // Renewed every third of its length: B's clock past the first expiry still finds it held.
    clockA.advance(TTL / 3);
    await waitUntil(
      async () => (await leaseRow(a, row.id)).expires_at === String(clockA.now() + TTL),
      'renewal',
    );
    clockB.advance(TTL + 1);
    expect(refused(await b.sessions.leases.take(row.id))).toBe(true);

    // A stops renewing (as a dead process would): past its expiry on B's clock, B takes over,
    // and A finds out at its next renewal.
    clockB.advance(TTL);
    const takeover = await b.sessions.leases.take(row.id);
    expect(refused(takeover)).toBe(false);
    clockA.advance(TTL / 3);
    await waitUntil(() => taken.lost.aborted, 'A hears it lost the lease');
    expect(String(taken.lost.reason)).toMatch(/another process took it over/);
    await taken.release(); // lost: releasing deletes nothing of B's
    expect(await a.sessions.leases.heldElsewhere(row.id)).toBe('process B');

    if (!refused(takeover)) await takeover.release();
    expect(await a.sessions.leases.heldElsewhere(row.id)).toBeUndefined();
  });

  it('goes to exactly one of several holders taking it at once', async () => {
    const holders = await Promise.all([1, 2, 3, 4].map((n) => holder(`holder ${n}`, new ManualClock())));
    const row = await holders[0]!.sessions.create({ workspace: '/w' });
    const results = await Promise.all(holders.map((h) => h.sessions.leases.take(row.id)));
    expect(results.filter((r) => !refused(r))).toHaveLength(1);
    for (const r of results) if (!refused(r)) await r.release();
  });
});

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
    const events = await openEventLog(storage, { writer: 'the test gateway' });
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
    const queue = await WorkQueue.open(db.url);
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

async function leaseRow(storage: PostgresStorage, sessionId: string) {
  const { rows } = await storage.pool.query<{ expires_at: string }>(
    'select expires_at from hearth_session_leases where session_id = $1',
    [sessionId],
  );
  return rows[0] ?? { expires_at: '' };
}
