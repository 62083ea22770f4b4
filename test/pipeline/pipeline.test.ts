/**
 * The pipeline end to end over real parts (see support.ts): a plan with dependencies becomes one
 * commit per task, in dependency order.
 */
import { expect, it } from 'vitest';
import { inDependencyOrder, roleOf, runOnce, twelveTasks, usePipeline } from './support.js';

const pipeline = usePipeline();

const TWELVE = twelveTasks(
  (n) => `src/m${n}.js`,
  (n) => `export default ${n};\n`,
);

it('a 12-task plan with dependencies completes with one commit per task, prerequisites first', async () => {
  const { bench, server, plans } = await pipeline.start(
    TWELVE,
    '# Twelve modules\n\nOne module per number, 1 to 12.',
  );
  const summary = await runOnce(bench, { baseUrl: server.baseUrl });

  expect(summary.planned).toBe(1);
  const tasks = plans.tasks();
  expect(tasks.map((t) => t.state)).toEqual(Array(12).fill('done'));
  const subjects = bench.subjects();
  expect(subjects).toHaveLength(12);
  expect(new Set(subjects).size).toBe(12);
  const order = subjects.map((s) => Number(/task #(\d+)/.exec(s)?.[1]));
  expect(inDependencyOrder(TWELVE.tasks, order)).toBe(true);
  expect(subjects[0]).toBe('hearth(coder): task #1 module 1');
  expect(bench.git('show', '--format=', '--name-only', 'HEAD~11').trim()).toBe('src/m1.js');
  expect(tasks.every((t) => t.commitHash && /^[0-9a-f]{40}$/.test(t.commitHash))).toBe(true);
  // One planner request, and per task one brief, one closing turn and one review.
  const roles = server.requests.map((r) => roleOf(r.body));
  expect(roles.filter((r) => r === 'planner')).toHaveLength(1);
  expect(roles.filter((r) => r === 'reviewer')).toHaveLength(12);

  // Adding the same plan again plans nothing new.
  expect(plans.addPlan(bench.ws, '# Twelve modules\n\nOne module per number, 1 to 12.').created).toBe(false);
  expect((await runOnce(bench, { baseUrl: server.baseUrl })).steps).toBe(0);
}, 120_000);
