/**
 * The scheduler storage contract (src/store/scheduler-storage.ts), one suite over both backends:
 * the scheduler lease, job progress, runs through their life, hand-offs to the queue, recovery
 * after a dead owner, the one-at-a-time claiming transaction, and wake-ups with their limit. Two
 * handles on one store stand for two processes or machines; times come from the test (leases on
 * the caller's clock), never the wall clock. What PostgreSQL alone does (leases on the server's
 * clock, locked races) stays in test/store/scheduler-storage.test.ts.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { NewRun, WakeupRow } from '../../../src/store/rows.js';
import {
  MAX_PENDING_WAKEUPS,
  type SchedulerStorage,
  WakeupLimitError,
} from '../../../src/store/scheduler-storage.js';
import type { SessionStorage } from '../../../src/store/session-storage.js';
import { describeEachBackend, type StorePlace } from '../../support/store-backends.js';

const T0 = Date.parse('2026-03-02T08:00:00Z');
const TTL = 60_000;
const slot = (jobId: string, slotAt: number): NewRun => ({
  kind: 'scheduled',
  status: 'queued',
  jobId,
  slotAt,
  prompt: 'tidy',
  workspace: '/ws',
});

describeEachBackend('scheduler storage', (backend) => {
  // PostgreSQL's text cannot hold a NUL: its connections drop them from every text parameter
  // (store/postgres/connection.ts), where SQLite keeps them.
  const kept = (text: string) => (backend.name === 'PostgreSQL' ? text.replaceAll('\u0000', '') : text);
  let place: StorePlace;
  let sessions: SessionStorage;
  let a: SchedulerStorage;
  let b: SchedulerStorage;
  beforeEach(async () => {
    place = await backend.fresh();
    sessions = await place.sessions();
    a = await place.scheduler({ scope: 'machine-a' });
    // Another process of the same Hearth home: it competes for the same lease.
    b = await place.scheduler({ scope: 'machine-a' });
  });

  it('gives the lease to one owner, renews it for that owner, and lets another take it once it lapsed', async () => {
    expect(await a.acquireLease('one', 11, T0, TTL)).toBe('acquired');
    expect(await b.acquireLease('two', 22, T0 + 1000, TTL)).toBe('held');
    expect(await b.leaseHolder(T0 + 1000)).toEqual({ owner: 'one', pid: 11 });
    expect(await a.acquireLease('one', 11, T0 + 2000, TTL)).toBe('renewed');
    expect(await b.holdsLease('one', T0 + 2000 + TTL - 1)).toBe(true);
    expect(await b.holdsLease('one', T0 + 2000 + TTL)).toBe(false);
    expect(await b.leaseHolder(T0 + 2000 + TTL)).toBeUndefined();
    expect(await b.acquireLease('two', 22, T0 + 2000 + TTL, TTL)).toBe('acquired');
    await a.releaseLease('one'); // not its lease any more: nothing happens
    expect(await a.holdsLease('two', T0 + 2000 + TTL)).toBe(true);
    await b.releaseLease('two');
    expect(await a.acquireLease('one', 11, T0 + 2000 + TTL, TTL)).toBe('acquired');
  });

  it('keeps one lease per scope: another Hearth home schedules beside this one', async () => {
    const other = await place.scheduler({ scope: 'machine-b' });
    expect(await a.acquireLease('one', 1, T0, TTL)).toBe('acquired');
    // On purpose: the scope names a Hearth home on a machine in a shared database (PostgreSQL);
    // a SQLite file is one home's, so its one lease covers every scope.
    expect(await other.acquireLease('two', 2, T0, TTL)).toBe(backend.name === 'SQLite' ? 'held' : 'acquired');
  });

  it('keeps job progress, stored definitions and overrides, seen by every handle', async () => {
    expect(await a.jobState('nightly')).toBeUndefined();
    expect(await a.ensureJob('nightly', T0)).toEqual({
      id: 'nightly',
      definition: null,
      enabledOverride: null,
      anchorAt: T0,
      cursorAt: T0,
    });
    expect((await b.ensureJob('nightly', T0 + 5)).anchorAt).toBe(T0); // created once
    await a.moveCursor('nightly', T0 + 60_000);
    await a.setEnabledOverride('nightly', false, T0);
    await b.saveDefinition('added', '{"id":"added"}', T0 + 1);
    expect(await b.jobState('nightly')).toMatchObject({
      cursorAt: T0 + 60_000,
      enabledOverride: false,
    });
    expect(await a.storedDefinitions()).toEqual([{ id: 'added', definition: '{"id":"added"}' }]);
    await a.setEnabledOverride('added', true, T0);
    expect(await b.jobState('added')).toMatchObject({
      enabledOverride: true,
      definition: '{"id":"added"}',
    });
    await b.removeJob('added');
    expect(await a.storedDefinitions()).toEqual([]);
  });

  it('records a run through its life: only its owner starts it; the outcome, tokens and session stay', async () => {
    const id = await a.insertRun(slot('nightly', T0), T0, 'one', TTL);
    expect(await b.startRun(id, 'two', T0, TTL)).toBe(false);
    expect(await a.startRun(id, 'one', T0 + 10, TTL)).toBe(true);
    expect(await a.startRun(id, 'one', T0 + 10, TTL)).toBe(false);
    await a.noteSession(id, 'sess-1');
    expect(await b.openRuns('nightly')).toMatchObject([{ id, status: 'running', sessionId: 'sess-1' }]);
    await a.finishRun(id, 'one', { status: 'ok', promptTokens: 7, completionTokens: 3 }, T0 + 20);
    expect(await b.get(id)).toEqual({
      id,
      kind: 'scheduled',
      jobId: 'nightly',
      slotAt: T0,
      ref: null,
      status: 'ok',
      reason: null,
      caughtUp: false,
      prompt: 'tidy',
      workspace: '/ws',
      sessionId: 'sess-1',
      queueKey: null,
      worker: null,
      host: null,
      promptTokens: 7,
      completionTokens: 3,
      owner: 'one',
      leaseUntil: null,
      createdAt: T0,
      startedAt: T0 + 10,
      endedAt: T0 + 20,
    });
    expect(await b.openRuns('nightly')).toEqual([]);
    expect(await b.runCount('nightly')).toBe(1);
  });

  it('keeps one record per job and slot, whoever inserts it', async () => {
    await a.insertRun(slot('nightly', T0), T0, 'one', TTL);
    await expect(b.insertRun(slot('nightly', T0), T0, 'two', TTL)).rejects.toThrow();
    await b.insertRun({ ...slot('nightly', T0 + 60_000), status: 'skipped', reason: 'missed' }, T0, 'two');
    expect((await a.runs({ jobId: 'nightly' })).map((r) => [r.slotAt, r.status, r.endedAt])).toEqual([
      [T0 + 60_000, 'skipped', T0],
      [T0, 'queued', null],
    ]);
    expect(await a.runCount('nightly')).toBe(0);
  });

  it('lists runs newest slot first, by job or kind, and finds an inbox or wake-up run by its ref', async () => {
    await a.insertRun(slot('x', T0), T0, 'one', TTL);
    await a.insertRun(slot('y', T0 + 1), T0, 'one', TTL);
    await a.insertRun({ kind: 'inbox', status: 'queued', ref: 'task.json', prompt: 'p' }, T0 + 2, 'one', TTL);
    await a.insertRun({ kind: 'wakeup', status: 'queued', ref: 'abcd', sessionId: 's' }, T0 + 3, 'one', TTL);
    expect((await b.runs()).map((r) => r.kind)).toEqual(['wakeup', 'inbox', 'scheduled', 'scheduled']);
    expect((await b.runs({ jobId: 'x' })).map((r) => r.slotAt)).toEqual([T0]);
    expect((await b.runs({ kind: 'inbox' })).map((r) => r.ref)).toEqual(['task.json']);
    expect((await b.runs({ limit: 1 })).map((r) => r.kind)).toEqual(['wakeup']);
    expect(await b.byRef('wakeup', 'abcd')).toMatchObject({ sessionId: 's' });
    expect(await b.byRef('inbox', 'nope')).toBeUndefined();
    expect((await b.queued('one')).map((r) => r.kind)).toEqual(['scheduled', 'scheduled', 'inbox', 'wakeup']);
    expect(await b.queued('two')).toEqual([]);
  });

  it('finds an inbox file’s run only for the Hearth home whose inbox it is', async () => {
    const elsewhere = await place.scheduler({ scope: 'machine-b' });
    const id = await a.insertRun({ kind: 'inbox', status: 'queued', ref: 'todo.txt' }, T0, 'one', TTL);
    expect(await b.byRef('inbox', 'todo.txt')).toMatchObject({ id, ref: 'todo.txt' });
    // On purpose: in a database machines share, another machine's todo.txt is another task;
    // a SQLite file belongs to one home, whose inbox is the only one.
    if (backend.name === 'PostgreSQL') {
      expect(await elsewhere.byRef('inbox', 'todo.txt')).toBeUndefined();
      await elsewhere.insertRun({ kind: 'inbox', status: 'queued', ref: 'todo.txt' }, T0, 'two', TTL);
      expect((await elsewhere.runs({ kind: 'inbox' })).map((r) => r.ref)).toEqual(['todo.txt', 'todo.txt']);
    }
  });

  it('hands a run to the queue once and records the worker’s result once', async () => {
    const id = await a.insertRun(slot('q', T0), T0, 'one', TTL);
    expect(await b.handOffRun(id, 'two', T0, 'job:q:1')).toBe(false);
    expect(await a.handOffRun(id, 'one', T0, 'job:q:1')).toBe(true);
    expect(await b.handedOff()).toMatchObject([
      { id, status: 'running', queueKey: 'job:q:1', leaseUntil: null },
    ]);
    const result = { status: 'ok' as const, worker: 'w1', host: 'gpu-box', sessionId: 'sess' };
    expect(await b.finishHandedOff('job:q:1', result, T0 + 5)).toBe(true);
    expect(await a.finishHandedOff('job:q:1', result, T0 + 6)).toBe(false);
    expect(await a.get(id)).toMatchObject({
      status: 'ok',
      worker: 'w1',
      host: 'gpu-box',
      endedAt: T0 + 5,
    });
    expect(await a.handedOff()).toEqual([]);
    const skipped = await a.insertRun(slot('q', T0 + 60_000), T0, 'one', TTL);
    expect(await a.skipRun(skipped, 'one', 'run elsewhere', T0)).toBe(true);
    expect(await a.get(skipped)).toMatchObject({ status: 'skipped', reason: 'run elsewhere' });
  });

  it('recovers a dead owner’s runs after their lease: running ones fail as interrupted, queued ones are adopted', async () => {
    const running = await a.insertRun(slot('r', T0), T0, 'dead', TTL);
    await a.startRun(running, 'dead', T0, TTL);
    const waiting = await a.insertRun(slot('r', T0 + 60_000), T0, 'dead', TTL);
    const handed = await a.insertRun(slot('h', T0), T0, 'dead', TTL);
    await a.handOffRun(handed, 'dead', T0, 'job:h:1');
    // Not yet: the lease holds.
    expect(await b.recoverExpired(T0 + TTL - 1, 'live', TTL)).toEqual([]);
    await a.renewRunLeases('dead', T0 + 30_000, TTL);
    expect(await b.recoverExpired(T0 + TTL + 1, 'live', TTL)).toEqual([]);
    const recovered = await b.recoverExpired(T0 + 30_000 + TTL + 1, 'live', TTL);
    expect(recovered.map((r) => [r.id, r.status, r.reason])).toEqual([
      [running, 'failed', 'interrupted: the process running it stopped before it ended'],
    ]);
    expect((await b.queued('live')).map((r) => r.id)).toEqual([waiting]);
    expect(await b.get(handed)).toMatchObject({ status: 'running', owner: 'dead' });
    // The dead process came back after all: its outcome is still written.
    await a.finishRun(running, 'dead', { status: 'ok' }, T0 + 100_000);
    expect(await b.get(running)).toMatchObject({ status: 'ok' });
  });

  it('lets one claiming transaction in at a time, and undoes one that throws', async () => {
    // Both read the cursor, then move it and record the slot: taking turns, the second sees the first's.
    const claim = (handle: SchedulerStorage, owner: string) =>
      handle.exclusive(async (tx) => {
        const state = await tx.ensureJob('c', T0);
        if (state.cursorAt >= T0 + 60_000) return false;
        await tx.insertRun(slot('c', T0 + 60_000), T0, owner, TTL);
        await tx.moveCursor('c', T0 + 60_000);
        return true;
      });
    const won = await Promise.all([claim(a, 'one'), claim(b, 'two'), claim(a, 'one'), claim(b, 'two')]);
    expect(won.filter(Boolean)).toHaveLength(1);
    await expect(
      a.exclusive(async (tx) => {
        await tx.insertRun(slot('c', T0 + 120_000), T0, 'one', TTL);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await b.runs({ jobId: 'c' })).toHaveLength(1);
  });

  describe('wake-ups', () => {
    let sessionId: string;
    beforeEach(async () => {
      sessionId = (await sessions.create({ workspace: '/ws' })).id;
    });

    it('keeps a session’s wake-ups, due ones oldest first, and the next time to wake', async () => {
      const later = await a.wakeups.add(sessionId, T0 + 2000, 'second', T0);
      const sooner = await a.wakeups.add(sessionId, T0 + 1000, 'first', T0);
      expect(await b.wakeups.nextAt()).toBe(T0 + 1000);
      expect(await b.wakeups.due(T0 + 999)).toEqual([]);
      expect((await b.wakeups.due(T0 + 5000)).map((w) => w.id)).toEqual([sooner.id, later.id]);
      expect(await b.wakeups.list({ sessionId })).toEqual([
        { ...later, status: 'pending' },
        { ...sooner, status: 'pending' },
      ]);
    });

    it('fires a wake-up once whoever claims it, and cancels one by its id’s prefix', async () => {
      const wakeup = await a.wakeups.add(sessionId, T0, 'check the build', T0);
      const fired = await Promise.all([
        a.exclusive((tx) => tx.wakeups.markFired(wakeup.id)),
        b.exclusive((tx) => tx.wakeups.markFired(wakeup.id)),
      ]);
      expect(fired.sort()).toEqual([false, true]);
      expect(await a.wakeups.due(T0 + 1)).toEqual([]);
      const other = await a.wakeups.add(sessionId, T0, 'later', T0);
      expect(await b.wakeups.cancel(other.id.slice(0, 5))).toMatchObject({
        id: other.id,
        status: 'cancelled',
      });
      expect(await b.wakeups.cancel(other.id)).toBeUndefined();
      expect(await a.wakeups.list({ pendingOnly: true })).toEqual([]);
    });

    it('refuses more pending wake-ups than the limit for one session', async () => {
      for (let i = 0; i < MAX_PENDING_WAKEUPS; i++) await a.wakeups.add(sessionId, T0 + i, `n${i}`, T0);
      await expect(b.wakeups.add(sessionId, T0, 'one too many', T0)).rejects.toThrow(WakeupLimitError);
      // Through the session storage, as the schedule_wakeup tool reaches them.
      await expect(sessions.wakeups()!.add(sessionId, T0, 'x', T0)).rejects.toThrow(/limit/);
    });

    it('counts only pending wake-ups to the limit, each session on its own', async () => {
      const added: WakeupRow[] = [];
      for (let i = 0; i < MAX_PENDING_WAKEUPS; i++)
        added.push(await a.wakeups.add(sessionId, T0 + i, `n${i}`, T0));
      const second = (await sessions.create({ workspace: '/ws' })).id;
      await b.wakeups.add(second, T0, 'another session', T0);
      await expect(a.wakeups.add(sessionId, T0, 'over', T0)).rejects.toThrow(/already has 10 pending/);
      // A fired or cancelled wake-up frees its place.
      expect(await b.exclusive((tx) => tx.wakeups.markFired(added[0]!.id))).toBe(true);
      expect(await b.wakeups.cancel(added[1]!.id)).toMatchObject({ status: 'cancelled' });
      await a.wakeups.add(sessionId, T0, 'room again', T0);
      await a.wakeups.add(sessionId, T0, 'and again', T0);
      await expect(a.wakeups.add(sessionId, T0, 'over', T0)).rejects.toThrow(WakeupLimitError);
      expect(await a.wakeups.list({ sessionId, pendingOnly: true, limit: 100 })).toHaveLength(
        MAX_PENDING_WAKEUPS,
      );
    });

    it('keeps to the limit when adds from two handles race', async () => {
      for (let i = 0; i < MAX_PENDING_WAKEUPS - 2; i++) await a.wakeups.add(sessionId, T0 + i, `n${i}`, T0);
      const settled = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).wakeups.add(sessionId, T0, `race ${i}`, T0)),
      );
      expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
      expect(await b.wakeups.list({ sessionId, pendingOnly: true, limit: 100 })).toHaveLength(
        MAX_PENDING_WAKEUPS,
      );
    });

    it('cancels nothing for an unknown id or a prefix several match, and never a fired one', async () => {
      const one = await a.wakeups.add(sessionId, T0, 'one', T0);
      const two = await a.wakeups.add(sessionId, T0, 'two', T0);
      expect(await b.wakeups.cancel('zzzz')).toBeUndefined();
      expect(await b.wakeups.cancel('')).toBeUndefined(); // a prefix of both
      await a.exclusive((tx) => tx.wakeups.markFired(one.id));
      expect(await b.wakeups.cancel(one.id)).toBeUndefined();
      expect(await b.exclusive((tx) => tx.wakeups.markFired('nope'))).toBe(false);
      expect(await b.wakeups.cancel(two.id)).toMatchObject({ id: two.id, status: 'cancelled' });
      expect((await b.wakeups.list({ sessionId })).map((w) => [w.id, w.status]).sort()).toEqual(
        [
          [one.id, 'fired'],
          [two.id, 'cancelled'],
        ].sort(),
      );
      expect(await b.wakeups.nextAt()).toBeUndefined();
    });

    it('keeps a wake-up message with unicode, and a long one, exactly', async () => {
      const text = `🦊 שלום 漢字 e\u0301 ${'z'.repeat(100_000)}`;
      const added = await a.wakeups.add(sessionId, T0, text, T0);
      expect(added.message).toBe(text);
      expect((await b.wakeups.due(T0)).map((w) => w.message)).toEqual([text]);
    });

    it('keeps a wake-up message holding a NUL character', async () => {
      const added = await a.wakeups.add(sessionId, T0, 'a\u0000b', T0);
      expect((await b.wakeups.due(T0)).map((w) => w.message)).toEqual([kept('a\u0000b')]);
      expect(added.message).toBe('a\u0000b');
    });

    it('lists a session’s wake-ups latest time first, up to a limit', async () => {
      for (let i = 0; i < 4; i++) await a.wakeups.add(sessionId, T0 + i * 1000, `n${i}`, T0);
      expect((await b.wakeups.list({ sessionId, limit: 2 })).map((w) => w.message)).toEqual(['n3', 'n2']);
      expect(await b.wakeups.list({ sessionId: 'none' })).toEqual([]);
    });
  });

  it('reads nothing and changes nothing for runs and jobs it does not have', async () => {
    expect(await b.get(424242)).toBeUndefined();
    expect(await b.jobState('none')).toBeUndefined();
    expect(await b.startRun(424242, 'one', T0, TTL)).toBe(false);
    expect(await b.skipRun(424242, 'one', 'why', T0)).toBe(false);
    expect(await b.handOffRun(424242, 'one', T0, 'job:none:1')).toBe(false);
    expect(await b.finishHandedOff('job:none:1', { status: 'ok' }, T0)).toBe(false);
    expect(await b.openRuns('none')).toEqual([]);
    expect(await b.runCount('none')).toBe(0);
    expect(await b.leaseHolder(T0)).toBeUndefined();
    expect(await b.holdsLease('one', T0)).toBe(false);
    await b.releaseLease('one');
    await b.removeJob('none');
  });

  it('keeps a run’s prompt and a stored definition with unicode and a large body', async () => {
    const prompt = `🦊 שלום 漢字 ${'p'.repeat(200_000)}`;
    const id = await a.insertRun({ ...slot('u', T0), prompt }, T0, 'one', TTL);
    expect((await b.get(id))?.prompt).toBe(prompt);
    const definition = JSON.stringify({ id: 'u', prompt: `nul:\u0000 ${prompt}` });
    await a.saveDefinition('u', definition, T0);
    expect(await b.storedDefinitions()).toEqual([{ id: 'u', definition }]);
  });

  it('keeps a run’s prompt holding a NUL character', async () => {
    const id = await a.insertRun({ ...slot('u', T0), prompt: 'a\u0000b' }, T0, 'one', TTL);
    expect((await b.get(id))?.prompt).toBe(kept('a\u0000b'));
  });
});
