import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { machineEnv, postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { queueAt } from '../support/storage.js';
import { waitUntil } from '../support/wait.js';
import { startWorkerProcess, untilWorkersStart, type WorkerProcess } from '../support/workers.js';

/** `hearth worker --concurrency 2`: its pool opens at most concurrency + 4 (WORKER_POOL_EXTRA in worker-actions.ts). */
const CONCURRENCY = 2;
const POOL_MAX = CONCURRENCY + 4;
/**
 * LISTEN needs connections outside the pool (store/postgres/listener.ts): the event log's, and the
 * turn queue's two (results and orders) once a turn runs here.
 */
const LISTENERS_MAX = 3;

/**
 * One Storage per process: a `hearth worker` with pipelines, queued jobs and turns on opens one
 * pool to the shared database (graphile-worker runs on it too), plus its LISTEN connections, and
 * names every connection `hearth <role> <pid>` in pg_stat_activity.
 */
describe.skipIf(!postgresBin())('the connections a hearth worker opens', () => {
  let db: TestPostgres;
  let llm: ScriptedServer;
  let worker: WorkerProcess | undefined;
  const dirs: string[] = [];

  beforeAll(async () => {
    db = await startPostgres();
    llm = await startScriptedServer({ models: ['scripted-model'], turns: [reply().text('done')] });
  }, 120_000);

  afterAll(async () => {
    // Stopped before its home is removed: a worker still writing its code cache there leaves it not empty.
    const child = worker?.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await llm?.close();
    await db?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  });

  it('opens one pool and its LISTEN connections, all named for the worker', async () => {
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'hearth-conn-ws-')));
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'hearth-conn-home-')));
    dirs.push(workspace, home);
    worker = startWorkerProcess(['--concurrency', String(CONCURRENCY)], {
      cwd: workspace,
      env: machineEnv(home, db.url, llm.baseUrl),
    });
    await untilWorkersStart([worker], 60_000);
    expect(worker.output()).toContain('pipeline plans: run here');
    // A queued task runs as an agent session on this worker: sessions, events and usage in the shared database.
    const queue = await queueAt(db.url);
    await queue.add({ task: 'say done', workspace, tags: [] });
    await queue.close();
    const check = new pg.Client({ connectionString: db.url, application_name: 'connection count test' });
    await check.connect();
    try {
      await waitUntil(
        async () => (await check.query('select count(*)::int as n from hearth_task_results')).rows[0].n === 1,
        'the queued task to finish',
        60_000,
      );
      const { rows } = await check.query<{ name: string; n: number }>(
        `select application_name as name, count(*)::int as n from pg_stat_activity
         where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()
         group by application_name`,
      );
      const pid = worker.child.pid;
      const byName = Object.fromEntries(rows.map((r) => [r.name, r.n]));
      const pooled = byName[`hearth worker ${pid}`] ?? 0;
      const listening = byName[`hearth listen ${pid}`] ?? 0;
      // Nothing else connected: every connection of the worker is its pool's or a LISTEN.
      expect(
        Object.keys(byName).filter(
          (name) => name !== `hearth worker ${pid}` && name !== `hearth listen ${pid}`,
        ),
      ).toEqual([]);
      expect(pooled).toBeGreaterThan(0);
      expect(pooled).toBeLessThanOrEqual(POOL_MAX);
      expect(listening).toBeLessThanOrEqual(LISTENERS_MAX);
    } finally {
      await check.end();
    }
  }, 180_000);
});
