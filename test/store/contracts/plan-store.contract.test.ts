/**
 * The plan store contract (src/pipeline/plan-store.ts), one suite over both backends: prerequisites
 * first, one claimant per task even across connections, interrupted tasks back to their phase,
 * failures passed on to dependents with the reason, retry-failed resetting exactly those, the
 * workspaces with open work, a plan planned once when two workers plan it at once, stale claims
 * refused. On purpose the backends differ in leases (the interface says so): PostgreSQL leases
 * claims and workspace holds for several machines; SQLite (one machine) has none and recovers by
 * process.
 */
import { beforeEach, expect, it } from 'vitest';
import type { PlanStore } from '../../../src/pipeline/plan-store.js';
import { describeEachBackend, type StorePlace } from '../../support/store-backends.js';
import { waitUntil } from '../../support/wait.js';

const task = (title: string, depends_on: number[] = []) => ({
  title,
  description: '',
  files: [],
  depends_on,
  acceptance: [],
});

async function planned(store: PlanStore) {
  const { plan } = await store.addPlan('/w', '# P');
  await store.setTasks(plan.id, [task('a'), task('b', [1]), task('c', [2]), task('d')]);
  return store.tasks(plan.id);
}

describeEachBackend('the plan store', (backend) => {
  let place: StorePlace;
  beforeEach(async () => {
    place = await backend.fresh();
  });

  it('hands out only tasks whose prerequisites are finished, each to one claimant', async () => {
    const one = (await place.pipeline()).plans;
    const two = (await place.pipeline()).plans;
    const [a, b, , d] = await planned(one);
    const first = await one.claim('w1', '/w');
    expect(first?.id).toBe(a!.id);
    expect((await two.claim('w2', '/w'))?.id).toBe(d!.id);
    expect(await one.claim('w1', '/w')).toBeUndefined();
    await one.transition(first!, 'done');
    expect((await two.claim('w2', '/w'))?.id).toBe(b!.id);
    expect(await one.claim('w1', '/other')).toBeUndefined();
  });

  it('never hands one task to two claimants racing for it', async () => {
    const stores = await Promise.all([
      place.pipeline(),
      place.pipeline(),
      place.pipeline(),
      place.pipeline(),
    ]);
    const { plan } = await stores[0]!.plans.addPlan('/w', '# Many');
    await stores[0]!.plans.setTasks(
      plan.id,
      Array.from({ length: 12 }, (_, i) => task(`t${i + 1}`)),
    );
    const taken = await Promise.all(
      stores.flatMap((s, i) => [0, 1, 2, 3].map(() => s.plans.claim(`w${i}`, '/w'))),
    );
    const ids = taken.filter((t) => t !== undefined).map((t) => t.id);
    expect(ids).toHaveLength(12);
    expect(new Set(ids).size).toBe(12);
  });

  it('stores a plan’s tasks once when two workers planned it', async () => {
    const [one, two] = [(await place.pipeline()).plans, (await place.pipeline()).plans];
    const { plan } = await one.addPlan('/w', '# Twice');
    const results = await Promise.all([
      one.setTasks(plan.id, [task('x')]),
      two.setTasks(plan.id, [task('y'), task('z')]),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await one.tasks(plan.id)).length).toBe(results[0] ? 1 : 2);
    expect((await two.plan(plan.id)).state).toBe('planned');
  });

  it('fails the dependents of a failed task with the reason, and retry-failed resets only those', async () => {
    const store = (await place.pipeline()).plans;
    const [a, b, c, d] = await planned(store);
    const [ca, cd] = [await store.claim('w', '/w'), await store.claim('w', '/w')];
    expect([ca?.id, cd?.id]).toEqual([a!.id, d!.id]);
    await store.transition(cd!, 'done');
    await store.fail(ca!, 'impasse: tests keep failing');
    expect((await store.task(b!.id)).state).toBe('failed');
    expect((await store.task(c!.id)).error).toBe(
      'prerequisite task #2 (b) failed: prerequisite task #1 (a) failed: impasse: tests keep failing',
    );
    expect(await store.retryFailed('/w')).toBe(3);
    expect((await store.tasks()).map((t) => t.state)).toEqual(['pending', 'pending', 'pending', 'done']);
    expect((await store.task(c!.id)).error).toBeNull();
    const log = await store.logOf(a!.planId, 'state');
    expect(log.filter((e) => e.taskId === a!.id).map((e) => (e.body as { state: string }).state)).toEqual([
      'coding',
      'failed',
      'pending',
    ]);
  });

  it('lists the workspaces with a plan to plan or a task neither finished nor failed', async () => {
    const store = (await place.pipeline()).plans;
    expect(await store.openWorkspaces()).toEqual([]);
    const [a, , , d] = await planned(store);
    await store.addPlan('/new', '# Not planned yet');
    const { plan: failedPlan } = await store.addPlan('/broken', '# Fails');
    await store.failPlan(failedPlan.id, 'the planner gave up');
    expect(await store.openWorkspaces()).toEqual(['/new', '/w']);
    const [ca, cd] = [await store.claim('w', '/w'), await store.claim('w', '/w')];
    expect([ca?.id, cd?.id]).toEqual([a!.id, d!.id]);
    await store.transition(cd!, 'done');
    await store.fail(ca!, 'impasse');
    // a failed, and with it b and c; d done: nothing open in /w.
    expect(await store.openWorkspaces()).toEqual(['/new']);
  });

  it('refuses every move and record of a claim that no longer stands, and changes nothing', async () => {
    const store = (await place.pipeline()).plans;
    const [a, b] = await planned(store);
    const leases = store.leaseMs !== undefined;
    expect(await store.hold('/w', 'w1')).toBe(true);
    const stale = (await store.claim('w1', '/w'))!;
    expect(stale).toMatchObject({ id: a!.id, owner: 'w1', epoch: 1 });
    // w1 is judged dead (SQLite: by its process; PostgreSQL: a worker of this machine whose process
    // is gone, taken over at once): w2 takes the workspace and the task.
    expect(await store.hold('/w', 'w2')).toBe(!leases);
    expect(await store.takeOver('/w', 'w2', () => true)).toBeUndefined();
    expect(await store.takeOver('/w', 'w2', (o) => o !== 'w1')).toBe(leases ? 'w1' : undefined);
    expect((await store.recover('/w', (o) => o !== 'w1')).map((t) => t.id)).toEqual([a!.id]);
    const taken = (await store.claim('w2', '/w'))!;
    expect(taken).toMatchObject({ id: a!.id, state: 'coding', owner: 'w2', epoch: 2 });
    const logged = (await store.logOf(a!.planId)).length;

    expect(await store.transition(stale, 'coded', { summary: 'stale' })).toBeUndefined();
    expect(await store.fail(stale, 'stale')).toBeUndefined();
    expect(await store.record(stale, 'review', { verdict: 'approve' })).toBe(false);
    expect(await store.confirm(stale, '/w')).toBe(false);
    expect(await store.task(a!.id)).toMatchObject({ state: 'coding', owner: 'w2', epoch: 2, summary: null });
    expect((await store.logOf(a!.planId)).length).toBe(logged);
    expect((await store.task(b!.id)).state).toBe('pending');
    expect(await store.confirm(taken, '/w')).toBe(true);

    // The same owner claiming it again is a new claim: the old one stays refused.
    await store.transition(taken, 'pending');
    const again = (await store.claim('w1', '/w'))!;
    expect(again).toMatchObject({ id: a!.id, owner: 'w1', epoch: 3 });
    expect(await store.transition(stale, 'coded')).toBeUndefined();
    expect(await store.record(again, 'verify', { findings: [] })).toBe(true);
    expect((await store.transition(again, 'coded'))?.state).toBe('coded');
  });

  if (backend.name === 'SQLite') {
    it('puts a dead worker’s tasks back in the phase they were in and leaves a live one’s alone', async () => {
      const store = (await place.pipeline()).plans;
      const [a, , , d] = await planned(store);
      await store.transition((await store.claim('dead', '/w'))!, 'reviewing');
      await store.claim('alive', '/w');
      const recovered = await store.recover('/w', (owner) => owner === 'alive');
      expect(recovered.map((t) => [t.id, t.state])).toEqual([[a!.id, 'coded']]);
      expect((await store.task(d!.id)).state).toBe('coding');
    });
  } else {
    // The lease runs on the database server's clock (now()), so this waits a real second out.
    it('puts a task back in its phase once its lease lapses, and keeps a renewed one', async () => {
      // One second: long enough for the renewals below, short enough to wait out.
      const store = (await place.pipeline({ leaseSeconds: 1 })).plans;
      const [a, , , d] = await planned(store);
      expect(await store.hold('/w', 'dead')).toBe(true);
      const lost = (await store.transition((await store.claim('dead', '/w'))!, 'reviewing'))!;
      expect(lost.id).toBe(a!.id);
      expect(await store.recover('/w', () => true)).toEqual([]);
      // Another worker gets the workspace only once the holder's lease lapsed.
      expect(await store.hold('/w', 'alive')).toBe(false);
      await waitUntil(() => store.hold('/w', 'alive'), 'the dead worker’s hold to lapse');
      const held = await store.claim('alive', '/w');
      expect(held?.id).toBe(d!.id);
      let recovered: Awaited<ReturnType<PlanStore['recover']>> = [];
      await waitUntil(async () => {
        // The live worker renews its claim meanwhile; the dead one's lapses.
        expect(await store.renew('alive', '/w', d!.id)).toBe(true);
        recovered = await store.recover('/w', () => true);
        return recovered.length > 0;
      }, 'the dead worker’s lease to lapse');
      expect(recovered.map((t) => [t.id, t.state])).toEqual([[a!.id, 'coded']]);
      expect((await store.task(d!.id)).state).toBe('coding');
      // The dead worker, back, finds it lost both.
      expect(await store.renew('dead', '/w', a!.id)).toBe(false);
      // A renewal that meets the task just recorded (out of the held states) is no loss.
      await store.transition(held!, 'coded');
      expect(await store.renew('alive', '/w', d!.id)).toBe(true);
      await store.release('/w', 'alive');
      expect(await store.renew('alive', '/w')).toBe(false);
      // Holding the workspace again renews the hold only; the task it had stays in its phase.
      expect(await store.hold('/w', 'dead')).toBe(true);
      expect(await store.renew('dead', '/w', a!.id)).toBe(true);
      expect(await store.task(a!.id)).toMatchObject({ state: 'coded' });
    });
  }

  it('stores a plan once per workspace: the same text (line endings aside) returns the stored one', async () => {
    const { plans } = await place.pipeline();
    const first = await plans.addPlan('/w', '# Tidy up\n\n- a\n');
    expect(first.created).toBe(true);
    expect(first.plan).toMatchObject({ workspace: '/w', title: 'Tidy up', state: 'new' });
    const again = await (await place.pipeline()).plans.addPlan('/w', '# Tidy up\r\n\r\n- a');
    expect(again).toEqual({ plan: first.plan, created: false });
    const elsewhere = await plans.addPlan('/other', '# Tidy up\n\n- a\n');
    expect(elsewhere.created).toBe(true);
    expect(elsewhere.plan.id).not.toBe(first.plan.id);
    expect((await plans.plans('/w')).map((p) => p.id)).toEqual([first.plan.id]);
    expect((await plans.plans()).map((p) => p.id).sort()).toEqual([first.plan.id, elsewhere.plan.id].sort());
    expect((await plans.unplanned('/w')).map((p) => p.id)).toEqual([first.plan.id]);
    expect(await plans.unplanned('/none')).toEqual([]);
  });

  it('says which plan or task it does not have', async () => {
    const { plans } = await place.pipeline();
    await expect(plans.plan(4242)).rejects.toThrow(/4242/);
    await expect(plans.task(4242)).rejects.toThrow(/4242/);
    expect(await plans.tasks(4242)).toEqual([]);
    expect(await plans.logOf(4242)).toEqual([]);
    expect(await plans.claim('w', '/none')).toBeUndefined();
    expect(await plans.heldIn('/none')).toBe(0);
    expect(await plans.retryFailed('/none')).toBe(0);
  });

  it('keeps tasks in the planner’s order with their dependencies, and a plan’s log in order', async () => {
    const { plans } = await place.pipeline();
    const [a, b, c, d] = await planned(plans);
    expect([a, b, c, d].map((t) => [t!.seq, t!.title, t!.state])).toEqual([
      [1, 'a', 'pending'],
      [2, 'b', 'pending'],
      [3, 'c', 'pending'],
      [4, 'd', 'pending'],
    ]);
    expect([a, b, c, d].map((t) => t!.dependsOn)).toEqual([[], [a!.id], [b!.id], []]);
    expect((await plans.plan(a!.planId)).state).toBe('planned');
    await plans.log({ id: null, planId: a!.planId }, 'note', { text: 'first' });
    await plans.log({ id: a!.id, planId: a!.planId }, 'note', { text: 'second' });
    expect((await plans.logOf(a!.planId, 'note')).map((e) => [e.taskId, e.body])).toEqual([
      [null, { text: 'first' }],
      [a!.id, { text: 'second' }],
    ]);
  });

  it('keeps unicode in a plan, its tasks and its log, and a large plan whole', async () => {
    const { plans } = await place.pipeline();
    const text = '🦊 שלום 漢字 e\u0301';
    const markdown = `# Plan ${text}\n\n${'line of the plan\n'.repeat(20_000)}`;
    const { plan } = await plans.addPlan('/w/ünï', markdown);
    expect((await (await place.pipeline()).plans.plan(plan.id)).markdown).toBe(markdown);
    await plans.setTasks(plan.id, [{ ...task(`t ${text}`), description: text, files: [`src/${text}.ts`] }]);
    const [stored] = await plans.tasks(plan.id);
    expect(stored).toMatchObject({ title: `t ${text}`, description: text, files: [`src/${text}.ts`] });
    await plans.log({ id: stored!.id, planId: plan.id }, 'note', { text });
    expect((await plans.logOf(plan.id, 'note'))[0]!.body).toEqual({ text });
    expect(await plans.openWorkspaces()).toEqual(['/w/ünï']);
  });

  it('moves a claimed task on with what its step found, and counts the tasks held', async () => {
    const { plans } = await place.pipeline();
    const [a] = await planned(plans);
    const claim = (await plans.claim('w1', '/w'))!;
    expect(await plans.heldIn('/w')).toBe(1);
    const coded = await plans.transition(claim, 'coded', {
      summary: 'did it',
      signatures: { 'src/a.ts': 3 },
      findings: [{ severity: 'minor', message: 'x' }] as never,
      sessionId: 'sess-1',
    });
    expect(coded).toMatchObject({ id: a!.id, state: 'coded', summary: 'did it', sessionId: 'sess-1' });
    expect(coded!.signatures).toEqual({ 'src/a.ts': 3 });
    expect(await plans.heldIn('/w')).toBe(0);
    // Further along first: the coded task before any pending one.
    expect(await plans.claim('w1', '/w')).toMatchObject({ id: a!.id, state: 'verifying' });
  });

  // PostgreSQL's text cannot hold a NUL: its connections drop them from every text parameter
  // (store/postgres/connection.ts), where SQLite keeps them.
  const kept = (text: string) => (backend.name === 'PostgreSQL' ? text.replaceAll('\u0000', '') : text);
  it('keeps a plan and its tasks holding a NUL character', async () => {
    const { plans } = await place.pipeline();
    const { plan } = await plans.addPlan('/w', '# a\u0000b');
    expect((await plans.plan(plan.id)).markdown).toBe(kept('# a\u0000b'));
    await plans.setTasks(plan.id, [{ ...task('t\u0000'), description: 'd\u0000' }]);
    expect((await plans.tasks(plan.id))[0]).toMatchObject({
      title: kept('t\u0000'),
      description: kept('d\u0000'),
    });
  });
});
