/**
 * Review loops end: a reviewer repeating a minor finding stops at the rework limit with the debt
 * recorded (in the store and in the commit), and one repeating a major finding fails the task,
 * and its dependents with it, for a stated reason.
 */
import { expect, it } from 'vitest';
import type { Verdict } from '../../src/pipeline/types.js';
import { roleOf, runOnce, titleOf, usePipeline } from './support.js';

const pipeline = usePipeline();

const nitpick: Verdict = {
  verdict: 'rework',
  findings: [{ severity: 'minor', message: 'name the constant in upper case', file: 'k.js' }],
  summary: 'almost',
};
const blocker: Verdict = {
  verdict: 'rework',
  findings: [{ severity: 'major', message: 'the function returns the wrong value' }],
  summary: 'wrong',
};

it('ends a task whose reviewer keeps repeating a minor finding as done_with_debt after 3 rework rounds', async () => {
  const { bench, server, plans } = await pipeline.start(
    {
      tasks: [{ title: 'constant', files: ['k.js'] }],
      coder: (_title, round) => ({ 'k.js': `export const k = ${round};\n` }),
      review: () => nitpick,
    },
    '# Constant',
  );
  await runOnce(bench, { baseUrl: server.baseUrl });

  const [task] = await plans.tasks();
  expect(task!.state).toBe('done_with_debt');
  expect(task!.rework).toBe(3);
  expect(task!.findings).toEqual(nitpick.findings);
  expect(server.requests.filter((r) => roleOf(r.body) === 'reviewer')).toHaveLength(4);
  expect(bench.subjects()).toEqual(['hearth(planner): plan #1 Constant', 'hearth(coder): task #1 constant']);
  const log = bench.git('show', 'HEAD:.hearth-pipeline/1/review-log.md');
  expect(log.match(/^- \[minor\] k\.js: name the constant in upper case$/gm)).toHaveLength(4);
  expect(log).toContain('## Task #1 constant: review 4, rework');
  expect(bench.git('log', '-1', '--format=%b')).toContain('[minor] name the constant in upper case');
  // The third time the same finding came back, the coder was told to step back.
  const coderTurns = server.requests.filter(
    (r) => roleOf(r.body) === 'coder' && r.body.messages.at(-1).role === 'user',
  );
  expect(coderTurns.map((r) => String(r.body.messages.at(-1).content).includes('Step back'))).toEqual([
    false,
    false,
    false,
    true,
  ]);
  expect(await plans.logOf(task!.planId, 'review')).toHaveLength(4);
}, 120_000);

it('fails a task whose reviewer keeps a major finding, and its dependents with the reason', async () => {
  const { bench, server, plans } = await pipeline.start(
    {
      tasks: [
        { title: 'value', files: ['v.js'] },
        { title: 'uses value', files: ['u.js'], depends_on: [1] },
      ],
      coder: (title): Record<string, string> =>
        title === 'value' ? { 'v.js': 'export const v = 1;\n' } : { 'u.js': '' },
      review: () => blocker,
    },
    '# Value',
  );
  await runOnce(bench, { baseUrl: server.baseUrl });

  const [value, uses] = await plans.tasks();
  expect(value!.state).toBe('failed');
  expect(value!.error).toBe('no approval after 3 rework rounds: the function returns the wrong value');
  expect(uses!.state).toBe('failed');
  expect(uses!.error).toContain('prerequisite task #1 (value) failed');
  expect(server.requests.some((r) => titleOf(r.body) === 'uses value')).toBe(false);
  expect(bench.subjects()).toEqual(['hearth(planner): plan #1 Value']);
}, 120_000);
