/**
 * The pipeline end to end over real parts (see support.ts): a plan with dependencies becomes one
 * commit per task, in dependency order, with its plans and tasks in either backend.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { reportOf } from '../../src/pipeline/report.js';
import { describeBackends, useStoreRigs } from './backends.js';
import { inDependencyOrder, roleOf, runOnce, twelveTasks, usePipeline } from './support.js';

const TWELVE = twelveTasks(
  (n) => `src/m${n}.js`,
  (n) => `export default ${n};\n`,
);

describeBackends('the pipeline', (backend) => {
  const rig = useStoreRigs(backend);
  // The sessions stay in the bench's SQLite file; plans and tasks go to the backend's store.
  const pipeline = usePipeline(backend.name === 'postgres' ? async () => (await rig()).open() : undefined);

  it('a 12-task plan with dependencies completes with one commit per task, prerequisites first', async () => {
    const { bench, server, plans } = await pipeline.start(
      TWELVE,
      '# Twelve modules\n\nOne module per number, 1 to 12.',
    );
    const summary = await runOnce(bench, { baseUrl: server.baseUrl, plans });

    expect(summary.planned).toBe(1);
    const tasks = await plans.tasks();
    expect(tasks.map((t) => t.state)).toEqual(Array(12).fill('done'));
    // The existing repository is kept as it was; the plan and its task list come first.
    expect(bench.git('log', '--format=%s', '--reverse').split('\n')[0]).toBe('start');
    const [planned, ...subjects] = bench.subjects();
    expect(planned).toBe('hearth(planner): plan #1 Twelve modules');
    expect(bench.git('show', '--format=', '--name-only', 'HEAD~12').trim().split('\n')).toEqual([
      '.hearth-pipeline/1/plan.md',
      '.hearth-pipeline/1/tasks.json',
    ]);
    const listed = JSON.parse(bench.git('show', 'HEAD~12:.hearth-pipeline/1/tasks.json')) as Array<{
      seq: number;
      depends_on: number[];
    }>;
    expect(listed.map((t) => t.depends_on)).toEqual(TWELVE.tasks.map((t) => t.depends_on));
    expect(subjects).toHaveLength(12);
    expect(new Set(subjects).size).toBe(12);
    const order = subjects.map((s) => Number(/task #(\d+)/.exec(s)?.[1]));
    expect(inDependencyOrder(TWELVE.tasks, order)).toBe(true);
    expect(subjects[0]).toBe('hearth(coder): task #1 module 1');
    expect(bench.git('show', '--format=', '--name-only', 'HEAD~11').trim().split('\n')).toEqual([
      '.hearth-pipeline/1/review-log.md',
      'src/m1.js',
    ]);
    // The review log grows with each task commit: twelve approvals in the last one.
    const log = bench.git('show', 'HEAD:.hearth-pipeline/1/review-log.md');
    expect(log.match(/^## Task #\d+ module \d+: review 1, approve$/gm)).toHaveLength(12);
    expect(tasks.every((t) => t.commitHash && /^[0-9a-f]{40}$/.test(t.commitHash))).toBe(true);
    // One planner request, and per task one brief, one closing turn and one review.
    const roles = server.requests.map((r) => roleOf(r.body));
    expect(roles.filter((r) => r === 'planner')).toHaveLength(1);
    expect(roles.filter((r) => r === 'reviewer')).toHaveLength(12);

    // The quality report counts what happened, tokens by role from the server's usage (15 a request).
    const report = await reportOf(plans, await plans.plan(1));
    expect(report).toMatchObject({ tasks: 12, byState: { done: 12 }, attempts: 12, reviews: 12, debt: [] });
    expect(report.tokens).toEqual({
      planner: 15,
      coder: 15 * roles.filter((r) => r === 'coder').length,
      reviewer: 15 * 12,
      total: 15 * server.requests.length,
    });

    // Adding the same plan again plans nothing new.
    expect(
      (await plans.addPlan(bench.ws, '# Twelve modules\n\nOne module per number, 1 to 12.')).created,
    ).toBe(false);
    expect((await runOnce(bench, { baseUrl: server.baseUrl, plans })).steps).toBe(0);
  }, 120_000);
});

const pipeline = usePipeline();

it("removes the index lock a worker killed while committing left, and makes that task's commit once", async () => {
  const { bench, server, plans } = await pipeline.start(
    { tasks: [], coder: () => ({}) },
    '# Interrupted\n\nOne note.',
  );
  await plans.setTasks(1, [
    { title: 'note', description: '', files: ['note.txt'], depends_on: [], acceptance: [] },
  ]);
  // A worker (dead now) had the task approved and was inside `git commit` when it was killed.
  const task = (await plans.claim('gone:1', bench.ws))!;
  await plans.transition(task, 'committing', { outcome: 'done', summary: 'wrote the note' });
  writeFileSync(path.join(bench.ws, 'note.txt'), 'noted\n');
  writeFileSync(path.join(bench.ws, '.git', 'index.lock'), '');

  const summary = await runOnce(bench, { baseUrl: server.baseUrl });
  expect(summary.recovered).toBe(1);
  expect((await plans.task(task.id)).state).toBe('done');
  expect(bench.subjects()).toEqual(['hearth(planner): plan #1 Interrupted', 'hearth(coder): task #1 note']);
  expect(bench.git('show', '--format=', '--name-only', 'HEAD').trim().split('\n')).toEqual([
    '.hearth-pipeline/1/review-log.md',
    'note.txt',
  ]);
  expect(existsSync(path.join(bench.ws, '.git', 'index.lock'))).toBe(false);
  expect(server.requests).toHaveLength(0);
}, 60_000);
