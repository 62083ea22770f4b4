import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { machineEnv, postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { eventLogAt, queueAt } from '../support/storage.js';
import { startWorkerProcess, untilWorkersStart, type WorkerProcess } from '../support/workers.js';

/**
 * Several workers started at once on a database nobody used yet, as a cluster's first start (or
 * CI) does. graphile-worker 0.16 installs its schema racily (graphile/worker#496); Hearth installs
 * it under its migration lock.
 */
describe.skipIf(!postgresBin())('workers starting together on a new database', () => {
  let db: TestPostgres;
  const dirs: string[] = [];

  beforeAll(async () => {
    db = await startPostgres();
  }, 120_000);

  afterAll(async () => {
    await db?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const freshDatabase = () => db.database();

  it('opens the queue from many processes at once, each round on a new database', async () => {
    // Without the lock some opener failed with a duplicate pg_namespace key in nearly every run of
    // these rounds (four runs in four, measured when the lock came in).
    for (let round = 0; round < 8; round++) {
      const url = await freshDatabase();
      // What `hearth worker` opens on start: the event log, then the queue.
      const opened = await Promise.allSettled(
        Array.from({ length: 8 }, async () => {
          const log = await eventLogAt(url, { writer: `opener in round ${round}` });
          try {
            const queue = await queueAt(url);
            await queue.close();
          } finally {
            await log.close();
          }
        }),
      );
      expect(opened.filter((o) => o.status === 'rejected')).toEqual([]);
      const check = new pg.Client({ connectionString: url });
      await check.connect();
      try {
        const installed = await check.query(
          'select count(*)::int as n, count(distinct id)::int as distinct_ids from graphile_worker.migrations',
        );
        expect(installed.rows[0].n).toBeGreaterThan(0);
        expect(installed.rows[0].n).toBe(installed.rows[0].distinct_ids);
      } finally {
        await check.end();
      }
    }
  }, 120_000);

  it('starts three `hearth worker` processes at once on a new database, and each takes tasks', async () => {
    const url = await freshDatabase();
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'hearth-fresh-ws-')));
    dirs.push(workspace);
    const workers: WorkerProcess[] = Array.from({ length: 3 }, () => {
      const home = realpathSync(mkdtempSync(join(tmpdir(), 'hearth-fresh-home-')));
      dirs.push(home);
      // No model is asked: the workers only start.
      return startWorkerProcess(['--lease', '3'], {
        cwd: workspace,
        env: machineEnv(home, url, 'http://127.0.0.1:9/v1'),
      });
    });
    try {
      await untilWorkersStart(workers, 60_000);
      expect(new Set(workers.map((w) => w.id())).size).toBe(3);
    } finally {
      for (const w of workers) w.child.kill('SIGTERM');
      const ended = await Promise.all(workers.map((w) => w.result));
      expect(ended.map((r) => r.stderr)).toEqual(['', '', '']);
    }
  }, 120_000);
});
