/**
 * Queuing work through the installed bin: `hearth submit` sends a task where something runs it (the
 * inbox a scheduler takes, or with a shared PostgreSQL database the queue workers take) and says
 * where it went and whether anything runs it; the scheduler's other ways in (jobs, wake-ups) beside
 * it; `hearth storage migrate` to move a machine onto the shared database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliRun } from '../support/cli.js';
import { useCliHarness } from '../support/cli-harness.js';
import { postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { reply } from '../support/scripted-server.js';
import { waitUntil } from '../support/wait.js';

const cli = useCliHarness('acc-queue');

async function hearth(args: string[], env?: Record<string, string>) {
  const r = await cli.run(args, env ? { env } : {});
  expect(r.code, `hearth ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r;
}

describe('without a shared database: the inbox and the scheduler', () => {
  it('submit puts the task in the inbox and says no scheduler runs; a pass runs it; jobs and wake-ups go the same way', async () => {
    await cli.serve([
      reply().text('Notes summarised.'),
      reply().text('The build is green.'),
      reply().text('Dependencies are current.'),
    ]);
    const submitted = await hearth(['submit', 'summarise', 'the', 'notes']);
    expect(submitted.stdout).toMatch(/in the inbox/);
    expect(submitted.stdout).toMatch(/no scheduler is running/i);
    expect(submitted.stdout).toContain('hearth scheduler');
    const name = /Queued (\S+\.json)/.exec(submitted.stdout)?.[1];
    expect(name, submitted.stdout).toBeDefined();
    expect((await hearth(['inbox'])).stdout).toMatch(new RegExp(`^waiting\\s+${name}`, 'm'));

    const pass = await hearth(['scheduler', '--once']);
    expect(pass.stdout).toMatch(new RegExp(`inbox ${name}: .*ok`));
    const listed = (await hearth(['inbox'])).stdout;
    const session = new RegExp(`^done\\s+${name}\\s+session ([0-9a-f]+)`, 'm').exec(listed)?.[1];
    expect(session, listed).toBeDefined();

    // A wake-up of that session, due now: the next pass resumes it.
    const woke = await hearth(['wake', session!, '--at', new Date().toISOString(), 'check', 'the', 'build']);
    expect(woke.stdout).toContain(`Session ${session} wakes at`);
    expect((await hearth(['wake', '--list'])).stdout).toMatch(/check the build/);
    expect((await hearth(['scheduler', '--once'])).stdout).toMatch(new RegExp(`wake-up of ${session}: .*ok`));

    // A job, run by hand.
    const added = await hearth([
      'jobs',
      'add',
      'deps',
      '--schedule',
      'daily 09:00',
      '--prompt',
      'check deps',
    ]);
    expect(added.stdout).toMatch(/Added job deps/);
    expect((await hearth(['jobs', 'list'])).stdout).toMatch(/deps/);
    expect((await hearth(['jobs', 'run', 'deps'])).stdout).toMatch(/ok/);
  });
});

describe.skipIf(!postgresBin())('with a shared PostgreSQL database: the queue and its workers', () => {
  let db: TestPostgres;
  beforeAll(async () => {
    db = await startPostgres();
  });
  afterAll(async () => {
    await db?.stop();
  });

  /** `hearth worker` with what it printed kept; its id once it takes tasks. */
  function startWorker(env: Record<string, string>) {
    const run: CliRun = cli.start(['worker', '--lease', '3', '--no-pipeline'], { env });
    let out = '';
    run.child.stdout!.on('data', (d) => {
      out += d;
    });
    run.child.stderr!.on('data', (d) => {
      out += d;
    });
    return { run, out: () => out };
  }

  it('submit queues for the workers and says whether one runs; the queue shows the same; storage migrate moves the history there', async () => {
    const url = await db.database();
    await cli.serve([
      reply().text('Old task done.'),
      reply().text('Release notes written.'),
      reply().text('Changelog tidied.'),
    ]);
    // A history on this machine first, moved to the shared database.
    await hearth(['submit', 'an', 'old', 'task']);
    await hearth(['scheduler', '--once']);
    const migrated = await hearth(['storage', 'migrate', '--to', url]);
    expect(migrated.stdout).toMatch(/1 of 1 sessions copied/);

    const shared = { HEARTH_DATABASE_URL: url };
    // No worker yet: queued all the same, and said so.
    const first = await hearth(['submit', 'write', 'the', 'release', 'notes'], shared);
    expect(first.stdout).toMatch(/on the shared queue/);
    expect(first.stdout).toMatch(/no worker/i);
    expect(first.stdout).toContain('hearth worker');
    const key = /Queued ([0-9a-f-]{36})/.exec(first.stdout)?.[1];
    expect(key, first.stdout).toBeDefined();
    expect((await hearth(['inbox'], shared)).stdout).not.toMatch(/^waiting/m);
    const waiting = (await hearth(['queue', 'list'], shared)).stdout;
    expect(waiting).toMatch(new RegExp(`^waiting\\s+${key}\\s+write the release notes`, 'm'));
    expect(waiting).toMatch(/no worker/i);

    // A worker starts and takes it.
    const worker = startWorker(shared);
    await waitUntil(
      () => worker.out().includes(`${key}: ok`),
      `the worker to run ${key}:\n${worker.out()}`,
      60_000,
    );
    const done = (await hearth(['queue', 'list', '--json'], shared)).stdout;
    const view = JSON.parse(done) as {
      done: Array<{ key: string; status: string; sessionId?: string }>;
      workers: Array<{ host: string; tags: string[] }>;
    };
    expect(view.done.find((r) => r.key === key)).toMatchObject({
      status: 'ok',
      sessionId: expect.any(String),
    });
    expect(view.workers).toHaveLength(1);

    // With the worker running: queued, and the worker named.
    const second = await hearth(['submit', 'tidy', 'the', 'changelog'], shared);
    expect(second.stdout).toMatch(/on the shared queue/);
    expect(second.stdout).toMatch(/1 worker/);
    const key2 = /Queued ([0-9a-f-]{36})/.exec(second.stdout)![1]!;
    await waitUntil(
      () => worker.out().includes(`${key2}: ok`),
      `the worker to run ${key2}:\n${worker.out()}`,
      60_000,
    );
    expect((await hearth(['queue', 'list'], shared)).stdout).toMatch(
      new RegExp(`^ok\\s+${key2}\\s+on \\S+\\s+session`, 'm'),
    );

    // Tags no running worker has: queued, and said that nothing takes it yet (queue add says the same).
    const tagged = await hearth(['submit', '--tags', 'gpu', 'train', 'the', 'model'], shared);
    expect(tagged.stdout).toMatch(/no worker with the tags gpu/i);
    const added = await hearth(['queue', 'add', '--tags', 'gpu', 'render', 'the', 'video'], shared);
    expect(added.stdout).toMatch(/on the shared queue/);
    expect(added.stdout).toMatch(/no worker with the tags gpu/i);

    worker.run.child.kill('SIGTERM');
    expect((await worker.run.result).code).toBe(0);
  });
});
