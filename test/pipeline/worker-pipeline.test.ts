/**
 * `hearth worker` runs the pipeline: a plan stored in a private PostgreSQL is planned and worked
 * by a worker process (no `hearth pipeline run` anywhere) whose machine has the workspace's folder,
 * each task ending in one commit; a plan of a folder this machine lacks is left alone without a
 * word, and a worker started with `--no-pipeline` says so and runs no plan, which another worker
 * then runs.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, runCli, startCli } from '../support/cli.js';
import { machineEnv, postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import type { ScriptedServer } from '../support/scripted-server.js';
import { initRepo, type Script, startRoleServer } from './support.js';

const script: Script = {
  tasks: [
    { title: 'module 1', files: ['m1.json'], depends_on: [], acceptance: ['m1.json holds 1'] },
    { title: 'module 2', files: ['m2.json'], depends_on: [1], acceptance: ['m2.json holds 2'] },
    { title: 'module 3', files: ['m3.json'], depends_on: [1], acceptance: ['m3.json holds 3'] },
  ],
  coder: (title, round) => {
    const n = title.split(' ')[1];
    return round === 1 ? { [`m${n}.json`]: `{"module": ${n}}` } : {};
  },
};

/** Resolves with the worker's output from now on, once it printed a line containing `text`. */
function printed(run: CliRun, text: string): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    run.child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(text)) resolve(out);
    });
  });
}

describe.skipIf(!postgresBin())('hearth worker runs the pipeline', () => {
  let db: TestPostgres;
  let llm: ScriptedServer;
  let root: string;
  let ws: string;
  let env: Record<string, string>;
  let git: (...args: string[]) => string;

  beforeAll(async () => {
    db = await startPostgres();
    llm = await startRoleServer(script);
    root = realpathSync(mkdtempSync(join(tmpdir(), 'hearth-worker-pipeline-')));
    ws = join(root, 'ws');
    git = initRepo(ws, root);
    const home = join(root, 'machine');
    mkdirSync(join(home, '.hearth'), { recursive: true });
    // Unattended and nobody to approve: the machine's own config lets the coder write.
    writeFileSync(
      join(home, '.hearth', 'config.json'),
      JSON.stringify({ pipeline: { lease: 2 }, permissions: { mode: 'auto' } }),
    );
    env = machineEnv(home, db.url, llm.baseUrl);
  }, 120_000);

  afterAll(async () => {
    await llm?.close();
    await db?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('plans and works a stored plan to one commit per task, skipping a folder it lacks', async () => {
    // A plan for a folder only another machine has.
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(root, 'other.md'), '# Other machine\n\nSomething there.');
    expect((await runCli(['plan', 'add', join(root, 'other.md')], { cwd: elsewhere, env })).code).toBe(0);
    rmSync(elsewhere, { recursive: true });

    writeFileSync(join(root, 'plan.md'), '# Three modules\n\nOne JSON file per number, 1 to 3.');
    expect((await runCli(['plan', 'add', join(root, 'plan.md')], { cwd: ws, env })).stdout).toContain(
      'Stored plan #2',
    );

    const worker = startCli(['worker'], { cwd: root, env });
    await printed(worker, `pipeline of ${ws}: Pipeline idle`);
    worker.child.kill('SIGTERM');
    const out = await worker.result;
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain(`pipeline of ${ws}: started`);
    expect(out.stdout).toContain(`pipeline of ${ws}: Pipeline idle: 9 steps`);
    // The missing folder's plan was not touched, and not mentioned.
    expect(out.stdout).not.toContain('elsewhere');
    expect(out.stdout).not.toContain('problem');

    const status = await runCli(['pipeline', 'status', '--json'], { cwd: ws, env });
    const [plan] = JSON.parse(status.stdout) as Array<{ tasks: Array<{ state: string }> }>;
    expect(plan?.tasks.map((t) => t.state)).toEqual(['done', 'done', 'done']);
    const subjects = git('log', '--format=%s').trim().split('\n').reverse();
    expect(subjects.slice(0, 2)).toEqual(['start', 'hearth(planner): plan #2 Three modules']);
    expect(subjects.slice(2)).toHaveLength(3);
    for (const n of [1, 2, 3]) {
      const commit = subjects.findIndex((s) => s.includes(`module ${n}`));
      expect(commit, subjects.join('\n')).toBeGreaterThan(1);
    }
    // The other machine's plan is still unplanned, there.
    mkdirSync(elsewhere);
    const other = await runCli(['pipeline', 'status', '--json'], { cwd: elsewhere, env });
    const [untouched] = JSON.parse(other.stdout) as Array<{ plan: { id: number; state: string } }>;
    expect(untouched?.plan).toMatchObject({ id: 1, state: 'new' });
    rmSync(elsewhere, { recursive: true });
  }, 120_000);

  it('leaves plans to other workers with --no-pipeline', async () => {
    writeFileSync(join(root, 'more.md'), '# More modules\n\nAgain, 1 to 3.');
    expect((await runCli(['plan', 'add', join(root, 'more.md')], { cwd: ws, env })).code).toBe(0);
    const aside = startCli(['worker', '--no-pipeline'], { cwd: root, env });
    // A worker that runs plans looks for them before it takes a task, and starts the open
    // workspace's run then: by this line, one that ignored the option would have said so.
    const before = await printed(aside, 'takes tasks');
    expect(before).toContain('pipeline plans: left to other workers (--no-pipeline)');
    expect(before).not.toContain('pipeline of');

    // The plan is workable: a worker without the option takes it while the first one still runs.
    const worker = startCli(['worker'], { cwd: root, env });
    const looked = await printed(worker, 'takes tasks');
    expect(looked.indexOf(`pipeline of ${ws}: started`)).toBeGreaterThan(-1);
    expect(looked.indexOf('pipeline plans: run here')).toBeLessThan(looked.indexOf('takes tasks'));
    await printed(worker, `pipeline of ${ws}: Pipeline idle`);
    worker.child.kill('SIGTERM');
    aside.child.kill('SIGTERM');
    const [out, asideOut] = [await worker.result, await aside.result];
    expect(out.code, out.stderr).toBe(0);
    expect(asideOut.code, asideOut.stderr).toBe(0);
    expect(out.stdout).toContain(`pipeline of ${ws}: Pipeline idle: 9 steps`);
    expect(asideOut.stdout).not.toContain('pipeline of');
    const status = await runCli(['pipeline', 'status', '--json'], { cwd: ws, env });
    const plans = JSON.parse(status.stdout) as Array<{
      plan: { title: string };
      tasks: Array<{ state: string }>;
    }>;
    expect(plans.find((p) => p.plan.title === 'More modules')?.tasks.map((t) => t.state)).toEqual([
      'done',
      'done',
      'done',
    ]);
  }, 120_000);
});
