import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, runCli, startCli } from '../support/cli.js';
import { machineEnv, postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { seededRandom } from '../support/seeded-random.js';
import { queueAt } from '../support/storage.js';
import { waitUntil } from '../support/wait.js';

const LEASE_SECONDS = 3;
const TASKS = 200;
/** 200 tasks at this delay over 3 workers of 2 take about 35 s: time for every kill and the restart. */
const REPLY_DELAY_MS = 1000;

describe.skipIf(!postgresBin())('workers on several machines share a PostgreSQL queue', () => {
  let db: TestPostgres;
  let llm: ScriptedServer;
  let workspace: string;
  const homes: string[] = [];

  beforeAll(async () => {
    db = await startPostgres();
    llm = await startScriptedServer({
      models: ['scripted-model'],
      // Each reply takes a while, as a real model's does, so the kills and the restart land mid-work.
      turns: Array.from({ length: TASKS * 4 }, () => reply().text('done').delayFirstByte(REPLY_DELAY_MS)),
    });
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'hearth-chaos-ws-')));
  }, 120_000);

  afterAll(async () => {
    await llm?.close();
    await db?.stop();
    for (const dir of [workspace, ...homes]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A worker as on its own machine: its own Hearth home and session database. */
  function worker(): CliRun {
    const home = mkdtempSync(join(tmpdir(), 'hearth-worker-home-'));
    homes.push(home);
    return startCli(['worker', '--concurrency', '2', '--lease', String(LEASE_SECONDS)], {
      cwd: workspace,
      env: machineEnv(home, db.url, llm.baseUrl),
    });
  }

  it('ends every task exactly once while workers are killed and the database restarts', async () => {
    const seed = Number(process.env.HEARTH_CHAOS_SEED ?? Date.now() % 100_000);
    console.log(`chaos seed ${seed} (HEARTH_CHAOS_SEED=${seed} replays it)`);
    const next = seededRandom(seed);
    const queue = await queueAt(db.url);
    const keys = new Set<string>();
    for (let i = 0; i < TASKS; i++) keys.add(await queue.add({ task: `task ${i}`, workspace, tags: [] }));
    await queue.close();

    const client = new pg.Client({ connectionString: db.url });
    const count = async () => {
      try {
        const c = new pg.Client({ connectionString: db.url });
        await c.connect();
        const r = await c.query('select count(*)::int as n from hearth_task_results');
        await c.end();
        return r.rows[0].n as number;
      } catch {
        return -1;
      }
    };
    const workers = [worker(), worker(), worker()];
    let kills = 0;
    let restarted = false;
    const restart = { from: 0, to: 0 };
    const killed: Array<{ pid: number; at: number }> = [];
    try {
      while ((await count()) < TASKS) {
        await new Promise((resolve) => setTimeout(resolve, 500 + next() * 1500));
        if ((await count()) >= TASKS) break;
        if (!restarted && kills >= 3) {
          restart.from = Date.now();
          await db.restart();
          restart.to = Date.now();
          restarted = true;
          continue;
        }
        if (kills < 12) {
          const victim = Math.floor(next() * workers.length);
          killed.push({ pid: workers[victim]!.child.pid!, at: Date.now() });
          workers[victim]!.child.kill('SIGKILL');
          await workers[victim]!.result;
          workers[victim] = worker();
          kills++;
        }
      }
    } finally {
      for (const w of workers) w.child.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.result));
    }
    expect(kills).toBeGreaterThanOrEqual(3);
    expect(restarted).toBe(true);

    await client.connect();
    try {
      // The reason is selected too, so that a failure shows why a task did not end well.
      const results = await client.query<{ key: string; status: string; reason: string | null }>(
        'select key, status, reason from hearth_task_results',
      );
      expect(new Set(results.rows.map((r) => r.key))).toEqual(keys);
      expect(results.rows.filter((r) => r.status !== 'ok')).toEqual([]);
      const left = await client.query(
        "select count(*)::int as n from graphile_worker.jobs where task_identifier like 'hearth_agent%'",
      );
      expect(left.rows[0].n).toBe(0);
      // A task whose worker was killed was claimed again by another within the lease plus a margin:
      // the sweep runs every third of a lease, and leaves alone a claim younger than 5 s whose
      // worker may still be registering (the margin allows for a loaded machine). A claim that spanned
      // the database restart is left out: its run stopped when its session could not be stored and
      // the queue retries it after graphile-worker's growing pause, whatever the kill did.
      const claims = await client.query<{ key: string; worker: string; at: number }>(
        'select key, worker, extract(epoch from claimed_at)::float * 1000 as at from hearth_task_claims order by claimed_at',
      );
      const waits: number[] = [];
      for (const kill of killed) {
        const held = claims.rows.filter(
          (c) =>
            c.worker.includes(`-${kill.pid}-`) &&
            c.at <= kill.at &&
            !(c.at < restart.to && kill.at > restart.from),
        );
        for (const claim of held) {
          const again = claims.rows.find((c) => c.key === claim.key && c.at > kill.at);
          const finishedBefore = again === undefined && !keys.has(claim.key);
          if (!finishedBefore && again) waits.push((again.at - kill.at) / 1000);
        }
      }
      const longest = Math.max(0, ...waits);
      console.log(
        `${kills} kills, ${waits.length} tasks taken over from a killed worker, longest wait ${longest.toFixed(1)} s`,
      );
      // The kills hit running tasks (workers are never idle while tasks wait), which others finished.
      expect(waits.length).toBeGreaterThan(0);
      expect(longest).toBeLessThan(LEASE_SECONDS + 5 + 20);
    } finally {
      await client.end();
    }
  }, 600_000);

  it('says how to configure the shared database when none is set', async () => {
    const r = await runCli(['queue', 'list'], {
      cwd: workspace,
      env: { HEARTH_HOME: join(workspace, '.h') },
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/storage: postgres:\/\/.*HEARTH_DATABASE_URL/);
  });

  it('queues a task from the command line, runs it on a worker with the right tags only, and lists it', async () => {
    const env = {
      HEARTH_HOME: join(workspace, '.cli-home'),
      HEARTH_DATABASE_URL: db.url,
      HEARTH_BASE_URL: llm.baseUrl,
    };
    const added = await runCli(['queue', 'add', '--tags', 'gpu', 'count the files'], { cwd: workspace, env });
    expect(added.stderr).toBe('');
    const key = /Queued ([0-9a-f-]{36})/.exec(added.stdout)?.[1];
    expect(key).toBeDefined();
    const waiting = JSON.parse((await runCli(['queue', 'list', '--json'], { cwd: workspace, env })).stdout);
    expect(waiting.pending).toEqual([
      expect.objectContaining({ key, task: 'count the files', tags: ['gpu'] }),
    ]);

    // A worker without the tag leaves it; one with it runs it.
    const plain = worker();
    const gpuHome = mkdtempSync(join(tmpdir(), 'hearth-worker-home-'));
    homes.push(gpuHome);
    const gpu = startCli(['worker', '--tags', 'gpu,vision', '--lease', String(LEASE_SECONDS)], {
      cwd: workspace,
      env: {
        ...env,
        HOME: gpuHome,
        HEARTH_HOME: join(gpuHome, '.hearth'),
        HEARTH_SANDBOX: 'none',
        HEARTH_MODEL: 'scripted-model',
      },
    });
    try {
      await waitUntil(async () => {
        const view = JSON.parse((await runCli(['queue', 'list', '--json'], { cwd: workspace, env })).stdout);
        return view.done.some((r: { key: string }) => r.key === key);
      }, 'the tagged task to finish');
    } finally {
      plain.child.kill('SIGTERM');
      gpu.child.kill('SIGTERM');
      await Promise.all([plain.result, gpu.result]);
    }
    expect((await gpu.result).stdout).toContain(`${key}: ok`);
    expect((await plain.result).stdout).not.toContain(key);
  }, 120_000);
});
