/**
 * The quality report is read from the plan's log in real SQLite: attempts, checks that sent work
 * back, findings by severity, debt, tokens by role, the role working now, and the wall time by
 * the store's clock.
 */
import { expect, it } from 'vitest';
import { describeReport, reportOf, reviewLog } from '../../src/pipeline/report.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqlitePlanStore } from '../../src/store/sqlite/plans.js';

it('counts attempts, rejections, findings, debt and tokens, and times the plan by its log', async () => {
  let now = 1_000_000;
  const plans = new SqlitePlanStore(openDatabase(':memory:'), () => now);
  const { plan } = await plans.addPlan('/w', '# Two steps');
  await plans.setTasks(plan.id, [
    { title: 'one', description: '', files: [], depends_on: [], acceptance: [] },
    { title: 'two', description: '', files: [], depends_on: [1], acceptance: [] },
  ]);
  await plans.log({ id: null, planId: plan.id }, 'tokens', { role: 'planner', tokens: 100 });
  // Swaps as the worker logs them: the planner's model loaded, then the coder's in its place.
  await plans.log({ id: null, planId: plan.id }, 'model_swap', {
    loaded: 'planner',
    unloaded: [],
    ms: 20_000,
  });
  const one = (await plans.claim('w', '/w'))!;
  await plans.log(one, 'model_swap', { loaded: 'coder', unloaded: ['planner'], ms: 45_000 });
  await plans.log(one, 'tokens', { role: 'coder', tokens: 40 });
  await plans.log(one, 'verify', { findings: ['one.js does not exist'] });
  now += 60_000;
  await plans.transition(one, 'pending');
  const again = (await plans.claim('w', '/w'))!;
  await plans.log(one, 'verify', { findings: [] });
  await plans.log(one, 'review', {
    verdict: 'rework',
    findings: [
      { severity: 'minor', message: 'naming' },
      { severity: 'major', message: 'wrong value' },
    ],
    summary: 'not yet',
  });
  await plans.log(one, 'tokens', { role: 'reviewer', tokens: 7 });
  const minor = [{ severity: 'minor' as const, message: 'naming' }];
  await plans.log(one, 'review', { verdict: 'rework', findings: minor, summary: '' });
  await plans.transition(again, 'done_with_debt', { outcome: 'done_with_debt', findings: minor });
  const two = (await plans.claim('w', '/w'))!;
  now += 3_725_000;
  await plans.log(two, 'role', { role: 'coder', model: 'qwen-coder' });

  const report = await reportOf(plans, await plans.plan(plan.id));
  expect(report).toEqual({
    planId: plan.id,
    title: 'Two steps',
    state: 'planned',
    tasks: 2,
    byState: { done_with_debt: 1, coding: 1 },
    attempts: 3,
    reviews: 2,
    verifierRejections: 1,
    quality: { blocked: 0, tasks: [] },
    findings: { critical: 0, major: 1, minor: 2 },
    debt: [{ seq: 1, title: 'one', findings: minor }],
    declined: [],
    tokens: { planner: 100, coder: 40, reviewer: 7, total: 147 },
    models: { loads: 2, unloads: 1, swapMs: 65_000 },
    wallMs: 3_785_000,
    current: { seq: 2, role: 'coder', model: 'qwen-coder' },
  });
  const text = describeReport(report);
  expect(text).toContain('wall time: 1h 3m');
  expect(text).toContain('models: 2 loads, 1 unloads, 1m 5s swapping');
  expect(text).toContain('now: task #2, coder (qwen-coder)');
  expect(text).toContain('    - [minor] naming');

  expect(await reviewLog(plans, await plans.plan(plan.id))).toBe(
    [
      '# Review log: plan #1 Two steps',
      '',
      '## Task #1 one: checks failed',
      '- one.js does not exist',
      '',
      '## Task #1 one: review 1, rework',
      'not yet',
      '- [minor] naming',
      '- [major] wrong value',
      '',
      '## Task #1 one: review 2, rework',
      '- [minor] naming',
      '',
    ].join('\n'),
  );
});
