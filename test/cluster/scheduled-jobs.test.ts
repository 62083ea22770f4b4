import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Runner, SchedulerEvent } from '../../src/scheduler/scheduler.js';
import { SchedulerService } from '../../src/scheduler/service.js';
import type { RunRow } from '../../src/store/rows.js';
import { homeScope } from '../../src/store/scheduler-storage.js';
import { type Db, openDatabase } from '../../src/store/sqlite/database.js';
import { openStorage, type PostgresStorage } from '../../src/store/storage.js';
import { runCli, startCli } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';
import { machineEnv, postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { waitUntil } from '../support/wait.js';
import { startWorkerProcess, untilWorkersStart, type WorkerProcess } from '../support/workers.js';

const MINUTE = 60_000;
const START = Date.parse('2026-03-02T08:00:00Z');
/** Agent runs in worker processes, through PostgreSQL: more than a unit test's few seconds. */
const LONG = 60_000;

describe.skipIf(!postgresBin())('scheduled jobs run by `hearth worker` through the shared queue', () => {
  let db: TestPostgres;
  let llm: ScriptedServer;
  let workspace: string;
  let sql: pg.Client;
  const dirs: string[] = [];
  const workers: WorkerProcess[] = [];
  const services: Array<{ service: SchedulerService; sqlite: Db }> = [];
  /** The shared database's pool the schedulers keep their records in, as `hearth scheduler` does. */
  let records: PostgresStorage;

  const tempDir = (prefix: string) => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    dirs.push(dir);
    return dir;
  };

  /** A worker as on its own machine: its own home and session database. */
  function startWorker(tags: string[]) {
    const home = tempDir('hearth-jobworker-');
    const worker = startWorkerProcess(['--lease', '3', ...(tags.length ? ['--tags', tags.join(',')] : [])], {
      cwd: workspace,
      env: machineEnv(home, db.url, llm.baseUrl),
    });
    workers.push(worker);
    return worker;
  }

  /** The jobs of a machine's user cron.json. */
  const writeJobs = (home: string, jobs: object[]) =>
    writeFileSync(join(home, 'cron.json'), JSON.stringify(jobs));

  /**
   * A scheduler as `hearth scheduler` opens it, on simulated time, with its home and its records in
   * the shared database (without one: in its own SQLite file).
   */
  async function scheduler(
    home: string,
    clock: ManualClock,
    onEvent?: (event: SchedulerEvent) => void,
    storage: string | null = db.url,
    runner?: Runner,
  ) {
    const dbPath = join(home, 'hearth.db');
    const sqlite = openDatabase(dbPath);
    const service = new SchedulerService({
      db: sqlite,
      dbPath,
      home,
      workspace,
      clock,
      storage: storage ?? undefined,
      ...(storage
        ? {
            records: await records.scheduler({ scope: homeScope(home) }),
          }
        : {}),
      onEvent,
      ...(runner ? { runner } : {}),
    });
    services.push({ service, sqlite });
    return service;
  }

  let gpu: WorkerProcess;
  let plain: WorkerProcess;

  beforeAll(async () => {
    db = await startPostgres();
    llm = await startScriptedServer({ models: ['scripted-model'] });
    workspace = tempDir('hearth-jobs-ws-');
    sql = new pg.Client({ connectionString: db.url });
    // The workers create the schema; a query before they did waits for it below.
    gpu = startWorker(['gpu']);
    plain = startWorker([]);
    await untilWorkersStart([gpu, plain], LONG);
    await sql.connect();
    records = (await openStorage({ storage: db.url })) as PostgresStorage;
  }, 2 * LONG);

  afterEach(async () => {
    for (const { service, sqlite } of services.splice(0)) {
      await service.stop();
      sqlite.close();
    }
    // Each test's jobs and runs are its own: a later scheduler neither runs nor adopts them.
    await sql.query(
      'truncate hearth_scheduler_runs, hearth_scheduler_jobs, hearth_scheduler_lease, hearth_wakeups',
    );
  });

  afterAll(async () => {
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.result));
    await sql?.end();
    await records?.close();
    await llm?.close();
    await db?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }, LONG);

  const tasksOf = async (job: string) =>
    (await sql.query<{ key: string }>('select key from hearth_tasks where key like $1', [`job:${job}:%`]))
      .rows;
  const claimsOf = async (key: string) =>
    (await sql.query<{ worker: string }>('select worker from hearth_task_claims where key = $1', [key])).rows;

  /** Ticks (the slot is decided and handed off) until the run has ended, as the loop does on NOTIFY. */
  async function settled(service: SchedulerService, id: number): Promise<RunRow> {
    await waitUntil(
      async () => {
        await service.scheduler.tick();
        return !['queued', 'running'].includes((await service.store.get(id))!.status);
      },
      `run ${id} to end`,
      LONG,
    );
    return (await service.store.get(id))!;
  }

  it(
    'runs a due job on a worker with its tags, never on one without, and records the host that ran it',
    async () => {
      const home = tempDir('hearth-jobs-home-');
      const clock = new ManualClock(START);
      const events: SchedulerEvent[] = [];
      const service = await scheduler(home, clock, (e) => events.push(e));
      await service.addJob({
        id: 'report',
        name: 'report',
        schedule: 'every 1m',
        prompt: 'write it',
        tags: ['gpu'],
      });
      llm.push(reply().text('report written'));
      await service.scheduler.tick(); // first sight: nothing owed yet
      clock.advance(MINUTE);
      // The loop, as `hearth scheduler` runs it: the result's NOTIFY wakes it, the clock stays put.
      service.start();
      await waitUntil(
        () => events.some((e) => e.type === 'finished' && e.run.jobId === 'report'),
        'the run to be recorded from the worker’s result',
        LONG,
      );
      const [run] = await service.runs({ jobId: 'report' });
      expect(run).toMatchObject({
        kind: 'scheduled',
        slotAt: START + MINUTE,
        status: 'ok',
        queueKey: `job:report:${new Date(START + MINUTE).toISOString()}`,
        worker: gpu.id(),
        host: hostname(),
      });
      expect(run!.sessionId).toBeTruthy();
      expect(events.find((e) => e.type === 'started')).toMatchObject({ run: { status: 'running' } });
      expect(await claimsOf(run!.queueKey!)).toEqual([{ worker: gpu.id() }]);
      expect(gpu.output()).toContain(`started job report, slot `);
      expect(plain.output()).not.toContain('job report');

      // `hearth jobs runs` reads the same record, with where it ran.
      const listed = await runCli(['jobs', 'runs', 'report'], {
        cwd: workspace,
        env: { HOME: home, HEARTH_HOME: home, HEARTH_DATABASE_URL: db.url },
      });
      expect(listed.stderr).toBe('');
      expect(listed.stdout).toContain(`ok`);
      expect(listed.stdout).toContain(`on ${hostname()} (worker ${gpu.id()})`);
      const jobs = await runCli(['jobs', 'list'], {
        cwd: workspace,
        env: { HOME: home, HEARTH_HOME: home, HEARTH_DATABASE_URL: db.url },
      });
      expect(jobs.stdout).toMatch(/report .*queue \[gpu\]/);
    },
    2 * LONG,
  );

  it(
    '`hearth scheduler` hands a job to the worker and prints where it ran',
    async () => {
      const home = tempDir('hearth-jobs-home-');
      writeJobs(home, [
        { id: 'boot', name: 'boot', schedule: 'startup', prompt: 'say hello', tags: ['gpu'] },
      ]);
      llm.push(reply().text('hello'));
      const cli = startCli(['scheduler'], {
        cwd: workspace,
        env: { HOME: home, HEARTH_HOME: home, HEARTH_DATABASE_URL: db.url },
      });
      let out = '';
      cli.child.stdout!.on('data', (d) => {
        out += d;
      });
      try {
        await waitUntil(() => /boot: .* ok /.test(out), 'the scheduler to print the finished run', LONG);
      } finally {
        cli.child.kill('SIGTERM');
      }
      expect((await cli.result).code).toBe(0);
      expect(out).toMatch(/boot: queued for a worker as job:boot:/);
      expect(out).toContain(`on ${hostname()} (worker ${gpu.id()})`);
    },
    2 * LONG,
  );

  it(
    'queues a slot once through a restart, a second scheduler and a result that came while none ran',
    async () => {
      const home = tempDir('hearth-jobs-home-');
      const clock = new ManualClock(START);
      const first = await scheduler(home, clock);
      const job = { id: 'nightly', name: 'nightly', schedule: 'every 1m', prompt: 'check', tags: ['gpu'] };
      await first.addJob(job);
      await first.scheduler.tick();
      // The worker's reply waits until the test lets it go: the run is going while schedulers change.
      llm.push(reply().text('checked').holdAfter(0));
      clock.advance(MINUTE);
      await first.scheduler.tick();
      const [handed] = await first.runs({ jobId: 'nightly' });
      expect(handed).toMatchObject({ status: 'running', slotAt: START + MINUTE });
      await waitUntil(
        async () => (await claimsOf(handed!.queueKey!)).length > 0,
        'the gpu worker to claim it',
        LONG,
      );

      // A slot that comes while the worker has the last one: overlap "skip" holds as for a local run.
      clock.advance(MINUTE);
      await first.scheduler.tick();
      expect((await first.runs({ jobId: 'nightly' }))[0]).toMatchObject({
        status: 'skipped',
        slotAt: START + 2 * MINUTE,
        reason: expect.stringContaining('still'),
      });
      await first.stop();

      // Another machine's scheduler, on the same records: the slot is decided already, and the
      // run it sees handed off is queued again only as the same key (a no-op).
      const elsewhereClock = new ManualClock(START + MINUTE);
      const elsewhere = await scheduler(tempDir('hearth-jobs-home-'), elsewhereClock);
      await elsewhere.scheduler.tick();
      expect(elsewhere.scheduler.isLeader).toBe(true);
      expect((await elsewhere.runs({ jobId: 'nightly' })).map((r) => r.status)).toEqual([
        'skipped',
        'running',
      ]);

      // The result comes while the first scheduler is down; a new process on its database picks it up.
      llm.release();
      await waitUntil(
        async () =>
          (await sql.query('select 1 from hearth_task_results where key = $1', [handed!.queueKey]))
            .rowCount === 1,
        'the worker’s result',
        LONG,
      );
      const restarted = await scheduler(home, clock);
      const run = await settled(restarted, handed!.id);
      expect(run).toMatchObject({ status: 'ok', worker: gpu.id(), host: hostname() });
      expect(await elsewhere.store.get(handed!.id)).toMatchObject({ status: 'ok', sessionId: run.sessionId });

      expect(await tasksOf('nightly')).toEqual([{ key: handed!.queueKey }]);
      expect(await claimsOf(handed!.queueKey!)).toHaveLength(1);
      expect(gpu.output().split(`started job nightly`).length - 1).toBe(1);
    },
    3 * LONG,
  );

  it(
    'makes up missed slots by the job’s catch_up, one run of the job on the queue at a time',
    async () => {
      const HOUR = 60 * MINUTE;
      const home = tempDir('hearth-jobs-home-');
      const clock = new ManualClock(START);
      const service = await scheduler(home, clock);
      const job = { id: 'asleep', name: 'asleep', schedule: 'every 1h', prompt: 'sum up', tags: ['gpu'] };
      await service.addJob({ ...job, catch_up: 'all' });
      await service.scheduler.tick();
      llm.push(reply().text('one'), reply().text('two'), reply().text('three'));
      clock.advance(3 * HOUR); // no scheduler ran through two slots; the third is on time
      await service.scheduler.tick();
      const byStatus = async () =>
        (await service.runs({ jobId: 'asleep' })).map((r) => [r.slotAt, r.status, r.caughtUp]);
      expect(await byStatus()).toEqual([
        [START + 3 * HOUR, 'queued', false],
        [START + 2 * HOUR, 'queued', true],
        [START + HOUR, 'running', true],
      ]);
      const last = (await service.runs({ jobId: 'asleep' }))[0]!;
      await settled(service, last.id);
      expect(await byStatus()).toEqual([
        [START + 3 * HOUR, 'ok', false],
        [START + 2 * HOUR, 'ok', true],
        [START + HOUR, 'ok', true],
      ]);
      expect((await tasksOf('asleep')).map((t) => t.key).sort()).toEqual(
        [1, 2, 3].map((h) => `job:asleep:${new Date(START + h * HOUR).toISOString()}`),
      );
    },
    2 * LONG,
  );

  it(
    'queues a run marked as handed off by a scheduler that died before queueing it',
    async () => {
      const home = tempDir('hearth-jobs-home-');
      const clock = new ManualClock(START);
      const service = await scheduler(home, clock);
      await service.addJob({
        id: 'orphan',
        name: 'orphan',
        schedule: 'every 1m',
        prompt: 'tidy',
        tags: ['gpu'],
      });
      // What a scheduler leaves when killed between its two steps: the run marked, nothing queued.
      const store = service.store;
      await store.ensureJob('orphan', START);
      await store.moveCursor('orphan', START + MINUTE);
      const id = await store.insertRun(
        {
          kind: 'scheduled',
          status: 'queued',
          jobId: 'orphan',
          slotAt: START + MINUTE,
          prompt: 'tidy',
          workspace,
        },
        START + MINUTE,
        'a-dead-process',
        0,
      );
      expect(
        await store.handOffRun(id, 'a-dead-process', START + MINUTE, 'job:orphan:dead-process-slot'),
      ).toBe(true);
      expect(await tasksOf('orphan')).toEqual([]);
      llm.push(reply().text('tidied'));
      clock.advance(MINUTE);
      const run = await settled(service, id);
      expect(run).toMatchObject({ status: 'ok', worker: gpu.id() });
      expect(await tasksOf('orphan')).toEqual([{ key: 'job:orphan:dead-process-slot' }]);
    },
    2 * LONG,
  );

  it(
    'ends the run as failed, with the reason, when its task fails on the worker',
    async () => {
      const home = tempDir('hearth-jobs-home-');
      const clock = new ManualClock(START);
      const service = await scheduler(home, clock);
      await service.addJob({
        id: 'broken',
        name: 'broken',
        schedule: 'every 1m',
        prompt: 'try',
        tags: ['gpu'],
      });
      llm.push(reply().httpError(400, { body: 'model refused the request' }));
      await service.scheduler.tick();
      clock.advance(MINUTE);
      await service.scheduler.tick();
      const run = await settled(service, (await service.runs({ jobId: 'broken' }))[0]!.id);
      expect(run.status).toBe('failed');
      expect(run.reason).toContain('model refused the request');
      expect(run.host).toBe(hostname());
    },
    2 * LONG,
  );

  it('runs a slot once between two machines’ schedulers on the shared records; both, and `hearth jobs runs`, show it', async () => {
    const ran: string[] = [];
    // The agent run itself is not what this is about: each machine's runner notes that it ran.
    const runner =
      (machine: string): Runner =>
      async ({ run }) => {
        ran.push(`${machine} ${run.slotAt}`);
        return { status: 'ok' };
      };
    // The same job in each machine's own cron.json.
    const job = { id: 'tidy-here', name: 'tidy-here', schedule: 'every 1m', prompt: 'tidy', run_on: 'here' };
    const machines = await Promise.all(
      ['a', 'b'].map(async (machine) => {
        const home = tempDir('hearth-jobs-home-');
        writeJobs(home, [job]);
        const clock = new ManualClock(START);
        return { home, clock, service: await scheduler(home, clock, undefined, db.url, runner(machine)) };
      }),
    );
    for (const { service } of machines) await service.scheduler.tick();
    // One lease per Hearth home: both schedule.
    expect(machines.map(({ service }) => service.scheduler.isLeader)).toEqual([true, true]);
    for (const { clock } of machines) clock.advance(MINUTE);
    await Promise.all(machines.map(({ service }) => service.scheduler.tick()));
    await Promise.all(machines.map(({ service }) => service.scheduler.idle()));

    expect(ran).toHaveLength(1);
    expect(ran[0]).toMatch(new RegExp(`^[ab] ${START + MINUTE}$`));
    const [seenByA, seenByB] = await Promise.all(
      machines.map(({ service }) => service.runs({ jobId: 'tidy-here' })),
    );
    expect(seenByA).toEqual(seenByB);
    expect(seenByA!.map((r) => [r.slotAt, r.status])).toEqual([[START + MINUTE, 'ok']]);
    const listed = await jobsCli(machines[1]!.home, ['runs', 'tidy-here']);
    expect(listed.stdout.trim().split('\n')).toHaveLength(1);
    expect(listed.stdout).toMatch(/on time +ok/);

    // The next slot, decided by one machine alone, runs there.
    machines[1]!.clock.advance(MINUTE);
    await machines[1]!.service.scheduler.tick();
    await machines[1]!.service.scheduler.idle();
    expect(ran.at(-1)).toBe(`b ${START + 2 * MINUTE}`);
  });

  /** `hearth jobs ...` as on the scheduler's machine: its home (cron.json, config.json) and the shared database. */
  const jobsCli = (home: string, args: string[]) =>
    runCli(['jobs', ...args], {
      cwd: workspace,
      env: {
        HOME: home,
        HEARTH_HOME: home,
        HEARTH_DATABASE_URL: db.url,
        HEARTH_BASE_URL: llm.baseUrl,
        HEARTH_MODEL: 'scripted-model',
        HEARTH_SANDBOX: 'none',
        HEARTH_CONTEXT_WINDOW: '32000',
      },
    });

  it(
    '`hearth jobs run` sends a queue job to a worker, waits for its result and prints where it ran',
    async () => {
      const home = tempDir('hearth-jobs-home-');
      writeJobs(home, [
        { id: 'adhoc', name: 'adhoc', schedule: 'daily 03:00', prompt: 'do it now', tags: ['gpu'] },
      ]);
      llm.push(reply().text('done by hand'));
      const ran = await jobsCli(home, ['run', 'adhoc']);
      expect(ran.stderr).toMatch(/^Queued for a worker as job:adhoc:manual:\S+; waiting for its result/);
      expect(ran.code).toBe(0);
      expect(ran.stdout).toMatch(
        new RegExp(`manual +ok .*session \\S+ +on ${hostname()} \\(worker ${gpu.id()}\\)`),
      );
      expect(gpu.output()).toMatch(/job:adhoc:manual:\S+: started job adhoc, run by hand at /);
      expect(plain.output()).not.toContain('adhoc');
      // The record is the manual run's; the job's schedule is as it was (no slot was taken).
      const runs = await jobsCli(home, ['runs', 'adhoc']);
      expect(runs.stdout.trim().split('\n')).toHaveLength(1);
      expect(runs.stdout).toMatch(/manual +ok /);
      const key = /job:adhoc:manual:\S+/.exec(ran.stderr)![0]!.replace(/;$/, '');
      expect(await claimsOf(key)).toEqual([{ worker: gpu.id() }]);
    },
    2 * LONG,
  );

  it(
    '`hearth jobs run --no-wait` queues it and returns; `hearth jobs runs` records the result later',
    async () => {
      const home = tempDir('hearth-jobs-home-');
      // scheduler.run_on: queue sends a job that names no tags to any worker.
      writeFileSync(join(home, 'config.json'), JSON.stringify({ scheduler: { run_on: 'queue' } }));
      writeJobs(home, [{ id: 'later', name: 'later', schedule: 'daily 04:00', prompt: 'take your time' }]);
      llm.push(reply().text('done later').holdAfter(0));
      const queued = await jobsCli(home, ['run', 'later', '--no-wait']);
      expect(queued.code).toBe(0);
      expect(queued.stderr).toBe('');
      const key = /queued for a worker as (job:later:manual:\S+)\./.exec(queued.stdout)?.[1];
      expect(key, queued.stdout).toBeDefined();
      const pending = await jobsCli(home, ['runs', 'later']);
      expect(pending.stdout).toMatch(/manual +running +on the queue/);

      llm.release();
      await waitUntil(
        async () =>
          (await sql.query('select 1 from hearth_task_results where key = $1', [key])).rowCount === 1,
        'the worker’s result',
        LONG,
      );
      const done = await jobsCli(home, ['runs', 'later']);
      const [claim] = await claimsOf(key!);
      expect(done.stdout).toMatch(new RegExp(`manual +ok .* on ${hostname()} \\(worker ${claim!.worker}\\)`));
    },
    2 * LONG,
  );

  it('`hearth jobs run` still runs a job that stays here in this process', async () => {
    const home = tempDir('hearth-jobs-home-');
    writeJobs(home, [{ id: 'local', name: 'local', schedule: 'daily 05:00', prompt: 'here please' }]);
    llm.push(reply().text('done here'));
    const ran = await jobsCli(home, ['run', 'local']);
    expect(ran.stderr).toBe('Running job local now…\n');
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/manual +ok +session /);
    expect(ran.stdout).not.toContain(' on ');
    expect(await tasksOf('local')).toEqual([]);
  });

  it('fails a queue job at once, saying what to set, when no shared database is configured', async () => {
    const home = tempDir('hearth-jobs-home-');
    const clock = new ManualClock(START);
    const service = await scheduler(home, clock, undefined, null);
    await service.addJob({
      id: 'lonely',
      name: 'lonely',
      schedule: 'every 1m',
      prompt: 'x',
      run_on: 'queue',
    });
    await service.scheduler.tick();
    clock.advance(MINUTE);
    await service.scheduler.tick();
    expect((await service.runs({ jobId: 'lonely' }))[0]).toMatchObject({
      status: 'failed',
      reason: expect.stringContaining('HEARTH_DATABASE_URL'),
    });
    // Run by hand, it fails the same way, at once.
    expect(await service.runNow('lonely')).toMatchObject({
      kind: 'manual',
      status: 'failed',
      reason: expect.stringContaining('HEARTH_DATABASE_URL'),
    });
  });
});
