import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type CliRun, startCli } from '../../test/support/cli.js';
import { postgresBin, startPostgres } from '../../test/support/postgres.js';
import { reply, startScriptedServer } from '../../test/support/scripted-server.js';
import { queueAt } from '../../test/support/storage.js';
import type { Figures } from '../stats.js';

const TASKS = 30;
/** Each model reply waits this long before its first byte: the jobs are I/O-bound, as with a real server. */
const MODEL_DELAY_MS = 300;

/**
 * Issue 25: throughput of the shared PostgreSQL queue with three `hearth worker` processes against
 * one, on I/O-bound scripted agent tasks (a private PostgreSQL server, the built CLI).
 */
export async function queueFigures(): Promise<Figures> {
  if (!postgresBin()) {
    return {
      rows: [{ figure: 'queue throughput', value: 'skipped: PostgreSQL is not installed' }],
      json: {},
    };
  }
  const db = await startPostgres();
  const llm = await startScriptedServer({
    models: ['m'],
    turns: Array.from({ length: TASKS * 3 }, () => reply().text('done').delayFirstByte(MODEL_DELAY_MS)),
  });
  const workspace = await mkdtemp(join(tmpdir(), 'hearth-bench-queue-'));
  try {
    const one = await drain(db.url, llm.baseUrl, workspace, 1);
    const three = await drain(db.url, llm.baseUrl, workspace, 3);
    const gain = three / one;
    return {
      rows: [
        { figure: `queue: ${TASKS} agent tasks, 1 worker`, value: `${one.toFixed(2)} tasks/s` },
        {
          figure: `queue: ${TASKS} agent tasks, 3 workers`,
          value: `${three.toFixed(2)} tasks/s`,
          baseline: `${one.toFixed(2)} tasks/s`,
          ratio: `${gain.toFixed(2)}×`,
        },
      ],
      json: { queue: { tasks: TASKS, oneWorker: one, threeWorkers: three, gain } },
    };
  } finally {
    await llm.close();
    await db.stop();
    await rm(workspace, { recursive: true, force: true });
  }
}

/** Starts `n` workers, queues the tasks once all are ready, and returns tasks per second until all end. */
async function drain(url: string, baseUrl: string, workspace: string, n: number): Promise<number> {
  const homes: string[] = [];
  const workers: CliRun[] = [];
  for (let i = 0; i < n; i++) {
    const home = await mkdtemp(join(tmpdir(), 'hearth-bench-worker-'));
    homes.push(home);
    const run = startCli(['worker'], {
      cwd: workspace,
      env: {
        HOME: home,
        HEARTH_HOME: join(home, '.hearth'),
        HEARTH_DATABASE_URL: url,
        HEARTH_BASE_URL: baseUrl,
        HEARTH_MODEL: 'm',
        HEARTH_SANDBOX: 'none',
        HEARTH_CONTEXT_WINDOW: '32000',
      },
    });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      run.child.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('takes tasks')) resolve();
      });
      run.child.once('exit', () => reject(new Error(`a worker exited before it started: ${out}`)));
    });
    workers.push(run);
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('truncate hearth_task_results');
    const queue = await queueAt(url);
    const started = performance.now();
    for (let i = 0; i < TASKS; i++) await queue.add({ task: `task ${i}`, workspace, tags: [] });
    await queue.close();
    for (;;) {
      const { rows } = await client.query('select count(*)::int as n from hearth_task_results');
      if (rows[0].n >= TASKS) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return TASKS / ((performance.now() - started) / 1000);
  } finally {
    await client.end();
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.result));
    await Promise.all(homes.map((h) => rm(h, { recursive: true, force: true })));
  }
}
