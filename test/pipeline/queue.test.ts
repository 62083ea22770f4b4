/**
 * The queue in real SQLite: prerequisites first, one claimant per task even across connections,
 * interrupted tasks back to their phase, failures passed on to dependents with the reason, and
 * retry-failed resetting exactly those.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { PlanStore } from '../../src/pipeline/plan-store.js';
import { openDatabase } from '../../src/store/database.js';

function planned(store: PlanStore) {
  const { plan } = store.addPlan('/w', '# P');
  store.setTasks(plan.id, [
    { title: 'a', description: '', files: [], depends_on: [], acceptance: [] },
    { title: 'b', description: '', files: [], depends_on: [1], acceptance: [] },
    { title: 'c', description: '', files: [], depends_on: [2], acceptance: [] },
    { title: 'd', description: '', files: [], depends_on: [], acceptance: [] },
  ]);
  return store.tasks(plan.id);
}

it('hands out only tasks whose prerequisites are finished, each to one claimant', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'hearth-queue-')), 'q.db');
  const one = new PlanStore(openDatabase(file));
  const two = new PlanStore(openDatabase(file));
  const [a, b, , d] = planned(one);
  expect(one.claim('w1', '/w')?.id).toBe(a!.id);
  expect(two.claim('w2', '/w')?.id).toBe(d!.id);
  expect(one.claim('w1', '/w')).toBeUndefined();
  one.transition(a!.id, 'done');
  expect(two.claim('w2', '/w')?.id).toBe(b!.id);
  expect(one.claim('w1', '/other')).toBeUndefined();
});

it('puts a dead worker’s tasks back in the phase they were in and leaves a live one’s alone', () => {
  const store = new PlanStore(openDatabase(':memory:'));
  const [a, , , d] = planned(store);
  store.claim('dead', '/w');
  store.transition(a!.id, 'reviewing');
  store.claim('alive', '/w');
  const recovered = store.recover('/w', (owner) => owner === 'alive');
  expect(recovered.map((t) => [t.id, t.state])).toEqual([[a!.id, 'coded']]);
  expect(store.task(d!.id).state).toBe('coding');
});

it('fails the dependents of a failed task with the reason, and retry-failed resets only those', () => {
  const store = new PlanStore(openDatabase(':memory:'));
  const [a, b, c, d] = planned(store);
  store.transition(d!.id, 'done');
  store.fail(a!.id, 'impasse: tests keep failing');
  expect(store.task(b!.id).state).toBe('failed');
  expect(store.task(c!.id).error).toBe(
    'prerequisite task #2 (b) failed: prerequisite task #1 (a) failed: impasse: tests keep failing',
  );
  expect(store.retryFailed('/w')).toBe(3);
  expect(store.tasks().map((t) => t.state)).toEqual(['pending', 'pending', 'pending', 'done']);
  expect(store.task(c!.id).error).toBeNull();
});
