/**
 * One suite over the scheduler's records (store/scheduler-storage.ts), run against both backends:
 * a real SQLite file and a private PostgreSQL server (skipped, saying so, where PostgreSQL is not
 * installed). Two handles on one store stand for two processes or machines.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SchedulerService } from '../../src/scheduler/service.js';
import type { NewRun } from '../../src/store/rows.js';
import { MAX_PENDING_WAKEUPS, WakeupLimitError } from '../../src/store/scheduler-storage.js';
import {
  type OpenedScheduler,
  type SchedulerStore,
  schedulerBackends,
} from '../support/scheduler-backends.js';
import { waitUntil } from '../support/wait.js';

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

for (const make of schedulerBackends) {
  const backend = make();
  describe.skipIf(backend.missing)(`scheduler storage on ${backend.name}`, () => {
    let store: SchedulerStore;
    let a: OpenedScheduler;
    let b: OpenedScheduler;

    beforeAll(() => backend.start(), 60_000);
    afterAll(() => backend.stop());
    beforeEach(async () => {
      store = await backend.fresh();
      a = await store.open({ scope: 'machine-a' });
      // Another process of the same Hearth home: it competes for the same lease.
      b = await store.open({ scope: 'machine-a' });
    });
    afterEach(() => backend.closeAll());

    it('gives the lease to one owner, renews it for that owner, and lets another take it once it lapsed', async () => {
      expect(await a.records.acquireLease('one', 11, T0, TTL)).toBe('acquired');
      expect(await b.records.acquireLease('two', 22, T0 + 1000, TTL)).toBe('held');
      expect(await b.records.leaseHolder(T0 + 1000)).toEqual({ owner: 'one', pid: 11 });
      expect(await a.records.acquireLease('one', 11, T0 + 2000, TTL)).toBe('renewed');
      expect(await b.records.holdsLease('one', T0 + 2000 + TTL - 1)).toBe(true);
      expect(await b.records.holdsLease('one', T0 + 2000 + TTL)).toBe(false);
      expect(await b.records.leaseHolder(T0 + 2000 + TTL)).toBeUndefined();
      expect(await b.records.acquireLease('two', 22, T0 + 2000 + TTL, TTL)).toBe('acquired');
      await a.records.releaseLease('one'); // not its lease any more: nothing happens
      expect(await a.records.holdsLease('two', T0 + 2000 + TTL)).toBe(true);
      await b.records.releaseLease('two');
      expect(await a.records.acquireLease('one', 11, T0 + 2000 + TTL, TTL)).toBe('acquired');
    });

    it('keeps one lease per scope: another Hearth home schedules beside this one', async () => {
      const other = await store.open({ scope: 'machine-b' });
      expect(await a.records.acquireLease('one', 1, T0, TTL)).toBe('acquired');
      expect(await other.records.acquireLease('two', 2, T0, TTL)).toBe(
        backend.name === 'SQLite' ? 'held' : 'acquired',
      );
    });

    it('keeps job progress, stored definitions and overrides, seen by every handle', async () => {
      expect(await a.records.jobState('nightly')).toBeUndefined();
      expect(await a.records.ensureJob('nightly', T0)).toEqual({
        id: 'nightly',
        definition: null,
        enabledOverride: null,
        anchorAt: T0,
        cursorAt: T0,
      });
      expect((await b.records.ensureJob('nightly', T0 + 5)).anchorAt).toBe(T0); // created once
      await a.records.moveCursor('nightly', T0 + 60_000);
      await a.records.setEnabledOverride('nightly', false, T0);
      await b.records.saveDefinition('added', '{"id":"added"}', T0 + 1);
      expect(await b.records.jobState('nightly')).toMatchObject({
        cursorAt: T0 + 60_000,
        enabledOverride: false,
      });
      expect(await a.records.storedDefinitions()).toEqual([{ id: 'added', definition: '{"id":"added"}' }]);
      await a.records.setEnabledOverride('added', true, T0);
      expect(await b.records.jobState('added')).toMatchObject({
        enabledOverride: true,
        definition: '{"id":"added"}',
      });
      await b.records.removeJob('added');
      expect(await a.records.storedDefinitions()).toEqual([]);
    });

    it('records a run through its life: only its owner starts it; the outcome, tokens and session stay', async () => {
      const id = await a.records.insertRun(slot('nightly', T0), T0, 'one', TTL);
      expect(await b.records.startRun(id, 'two', T0, TTL)).toBe(false);
      expect(await a.records.startRun(id, 'one', T0 + 10, TTL)).toBe(true);
      expect(await a.records.startRun(id, 'one', T0 + 10, TTL)).toBe(false);
      await a.records.noteSession(id, 'sess-1');
      expect(await b.records.openRuns('nightly')).toMatchObject([
        { id, status: 'running', sessionId: 'sess-1' },
      ]);
      await a.records.finishRun(id, 'one', { status: 'ok', promptTokens: 7, completionTokens: 3 }, T0 + 20);
      expect(await b.records.get(id)).toEqual({
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
      expect(await b.records.openRuns('nightly')).toEqual([]);
      expect(await b.records.runCount('nightly')).toBe(1);
    });

    it('keeps one record per job and slot, whoever inserts it', async () => {
      await a.records.insertRun(slot('nightly', T0), T0, 'one', TTL);
      await expect(b.records.insertRun(slot('nightly', T0), T0, 'two', TTL)).rejects.toThrow();
      await b.records.insertRun(
        { ...slot('nightly', T0 + 60_000), status: 'skipped', reason: 'missed' },
        T0,
        'two',
      );
      expect(
        (await a.records.runs({ jobId: 'nightly' })).map((r) => [r.slotAt, r.status, r.endedAt]),
      ).toEqual([
        [T0 + 60_000, 'skipped', T0],
        [T0, 'queued', null],
      ]);
      expect(await a.records.runCount('nightly')).toBe(0);
    });

    it('lists runs newest slot first, by job or kind, and finds an inbox or wake-up run by its ref', async () => {
      await a.records.insertRun(slot('x', T0), T0, 'one', TTL);
      await a.records.insertRun(slot('y', T0 + 1), T0, 'one', TTL);
      await a.records.insertRun(
        { kind: 'inbox', status: 'queued', ref: 'task.json', prompt: 'p' },
        T0 + 2,
        'one',
        TTL,
      );
      await a.records.insertRun(
        { kind: 'wakeup', status: 'queued', ref: 'abcd', sessionId: 's' },
        T0 + 3,
        'one',
        TTL,
      );
      expect((await b.records.runs()).map((r) => r.kind)).toEqual([
        'wakeup',
        'inbox',
        'scheduled',
        'scheduled',
      ]);
      expect((await b.records.runs({ jobId: 'x' })).map((r) => r.slotAt)).toEqual([T0]);
      expect((await b.records.runs({ kind: 'inbox' })).map((r) => r.ref)).toEqual(['task.json']);
      expect((await b.records.runs({ limit: 1 })).map((r) => r.kind)).toEqual(['wakeup']);
      expect(await b.records.byRef('wakeup', 'abcd')).toMatchObject({ sessionId: 's' });
      expect(await b.records.byRef('inbox', 'nope')).toBeUndefined();
      expect((await b.records.queued('one')).map((r) => r.kind)).toEqual([
        'scheduled',
        'scheduled',
        'inbox',
        'wakeup',
      ]);
      expect(await b.records.queued('two')).toEqual([]);
    });

    it('finds an inbox file’s run only for the Hearth home whose inbox it is', async () => {
      const elsewhere = await store.open({ scope: 'machine-b' });
      const id = await a.records.insertRun(
        { kind: 'inbox', status: 'queued', ref: 'todo.txt' },
        T0,
        'one',
        TTL,
      );
      expect(await b.records.byRef('inbox', 'todo.txt')).toMatchObject({ id, ref: 'todo.txt' });
      // In a database machines share, another machine's todo.txt is another task.
      if (backend.name === 'PostgreSQL') {
        expect(await elsewhere.records.byRef('inbox', 'todo.txt')).toBeUndefined();
        await elsewhere.records.insertRun(
          { kind: 'inbox', status: 'queued', ref: 'todo.txt' },
          T0,
          'two',
          TTL,
        );
        expect((await elsewhere.records.runs({ kind: 'inbox' })).map((r) => r.ref)).toEqual([
          'todo.txt',
          'todo.txt',
        ]);
      }
    });

    it('hands a run to the queue once and records the worker’s result once', async () => {
      const id = await a.records.insertRun(slot('q', T0), T0, 'one', TTL);
      expect(await b.records.handOffRun(id, 'two', T0, 'job:q:1')).toBe(false);
      expect(await a.records.handOffRun(id, 'one', T0, 'job:q:1')).toBe(true);
      expect(await b.records.handedOff()).toMatchObject([
        { id, status: 'running', queueKey: 'job:q:1', leaseUntil: null },
      ]);
      const result = { status: 'ok' as const, worker: 'w1', host: 'gpu-box', sessionId: 'sess' };
      expect(await b.records.finishHandedOff('job:q:1', result, T0 + 5)).toBe(true);
      expect(await a.records.finishHandedOff('job:q:1', result, T0 + 6)).toBe(false);
      expect(await a.records.get(id)).toMatchObject({
        status: 'ok',
        worker: 'w1',
        host: 'gpu-box',
        endedAt: T0 + 5,
      });
      expect(await a.records.handedOff()).toEqual([]);
      const skipped = await a.records.insertRun(slot('q', T0 + 60_000), T0, 'one', TTL);
      expect(await a.records.skipRun(skipped, 'one', 'run elsewhere', T0)).toBe(true);
      expect(await a.records.get(skipped)).toMatchObject({ status: 'skipped', reason: 'run elsewhere' });
    });

    it('recovers a dead owner’s runs after their lease: running ones fail as interrupted, queued ones are adopted', async () => {
      const running = await a.records.insertRun(slot('r', T0), T0, 'dead', TTL);
      await a.records.startRun(running, 'dead', T0, TTL);
      const waiting = await a.records.insertRun(slot('r', T0 + 60_000), T0, 'dead', TTL);
      const handed = await a.records.insertRun(slot('h', T0), T0, 'dead', TTL);
      await a.records.handOffRun(handed, 'dead', T0, 'job:h:1');
      // Not yet: the lease holds.
      expect(await b.records.recoverExpired(T0 + TTL - 1, 'live', TTL)).toEqual([]);
      await a.records.renewRunLeases('dead', T0 + 30_000, TTL);
      expect(await b.records.recoverExpired(T0 + TTL + 1, 'live', TTL)).toEqual([]);
      const recovered = await b.records.recoverExpired(T0 + 30_000 + TTL + 1, 'live', TTL);
      expect(recovered.map((r) => [r.id, r.status, r.reason])).toEqual([
        [running, 'failed', 'interrupted: the process running it stopped before it ended'],
      ]);
      expect((await b.records.queued('live')).map((r) => r.id)).toEqual([waiting]);
      expect(await b.records.get(handed)).toMatchObject({ status: 'running', owner: 'dead' });
      // The dead process came back after all: its outcome is still written.
      await a.records.finishRun(running, 'dead', { status: 'ok' }, T0 + 100_000);
      expect(await b.records.get(running)).toMatchObject({ status: 'ok' });
    });

    it('lets one claiming transaction in at a time, and undoes one that throws', async () => {
      // Both read the cursor, then move it and record the slot: taking turns, the second sees the first's.
      const claim = (handle: OpenedScheduler, owner: string) =>
        handle.records.exclusive(async (tx) => {
          const state = await tx.ensureJob('c', T0);
          if (state.cursorAt >= T0 + 60_000) return false;
          await tx.insertRun(slot('c', T0 + 60_000), T0, owner, TTL);
          await tx.moveCursor('c', T0 + 60_000);
          return true;
        });
      const won = await Promise.all([claim(a, 'one'), claim(b, 'two'), claim(a, 'one'), claim(b, 'two')]);
      expect(won.filter(Boolean)).toHaveLength(1);
      await expect(
        a.records.exclusive(async (tx) => {
          await tx.insertRun(slot('c', T0 + 120_000), T0, 'one', TTL);
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      expect(await b.records.runs({ jobId: 'c' })).toHaveLength(1);
    });

    describe('wake-ups', () => {
      let sessionId: string;
      beforeEach(async () => {
        sessionId = (await a.storage.sessions.create({ workspace: '/ws' })).id;
      });

      it('keeps a session’s wake-ups, due ones oldest first, and the next time to wake', async () => {
        const later = await a.records.wakeups.add(sessionId, T0 + 2000, 'second', T0);
        const sooner = await a.records.wakeups.add(sessionId, T0 + 1000, 'first', T0);
        expect(await b.records.wakeups.nextAt()).toBe(T0 + 1000);
        expect(await b.records.wakeups.due(T0 + 999)).toEqual([]);
        expect((await b.records.wakeups.due(T0 + 5000)).map((w) => w.id)).toEqual([sooner.id, later.id]);
        expect(await b.records.wakeups.list({ sessionId })).toEqual([
          { ...later, status: 'pending' },
          { ...sooner, status: 'pending' },
        ]);
      });

      it('fires a wake-up once whoever claims it, and cancels one by its id’s prefix', async () => {
        const wakeup = await a.records.wakeups.add(sessionId, T0, 'check the build', T0);
        const fired = await Promise.all([
          a.records.exclusive((tx) => tx.wakeups.markFired(wakeup.id)),
          b.records.exclusive((tx) => tx.wakeups.markFired(wakeup.id)),
        ]);
        expect(fired.sort()).toEqual([false, true]);
        expect(await a.records.wakeups.due(T0 + 1)).toEqual([]);
        const other = await a.records.wakeups.add(sessionId, T0, 'later', T0);
        expect(await b.records.wakeups.cancel(other.id.slice(0, 5))).toMatchObject({
          id: other.id,
          status: 'cancelled',
        });
        expect(await b.records.wakeups.cancel(other.id)).toBeUndefined();
        expect(await a.records.wakeups.list({ pendingOnly: true })).toEqual([]);
      });

      it('refuses more pending wake-ups than the limit for one session', async () => {
        for (let i = 0; i < MAX_PENDING_WAKEUPS; i++)
          await a.records.wakeups.add(sessionId, T0 + i, `n${i}`, T0);
        await expect(b.records.wakeups.add(sessionId, T0, 'one too many', T0)).rejects.toThrow(
          WakeupLimitError,
        );
        // Through the session storage, as the schedule_wakeup tool reaches them.
        await expect(a.storage.sessions.wakeups()!.add(sessionId, T0, 'x', T0)).rejects.toThrow(/limit/);
      });
    });
  });
}

const postgres = schedulerBackends[1]!();
describe.skipIf(postgres.missing)('scheduler storage on PostgreSQL, on the server’s clock', () => {
  beforeAll(() => postgres.start(), 60_000);
  afterAll(() => postgres.stop());
  afterEach(() => postgres.closeAll());

  it('compares leases on the server’s clock, whatever the machines’ clocks say', async () => {
    const store = await postgres.fresh();
    const [early, late] = [
      await store.open({ leaseClock: 'server' }),
      await store.open({ leaseClock: 'server' }),
    ];
    // A machine whose clock runs a day ahead would see the lease lapsed on its own clock.
    expect(await early.records.acquireLease('early', 1, T0, TTL)).toBe('acquired');
    expect(await late.records.acquireLease('late', 2, T0 + 86_400_000, TTL)).toBe('held');
    const run = await early.records.insertRun(slot('s', T0), T0, 'early', TTL);
    await early.records.startRun(run, 'early', T0, TTL);
    expect(await late.records.recoverExpired(T0 + 86_400_000, 'late', TTL)).toEqual([]);
    // A lease of no length lapses at once, on that clock too.
    const brief = await early.records.insertRun(slot('s', T0 + 60_000), T0, 'early', TTL);
    await early.records.startRun(brief, 'early', T0, -1);
    expect((await late.records.recoverExpired(T0, 'late', TTL)).map((r) => r.id)).toEqual([brief]);
  });

  it('keeps to the wake-up limit when adds from two machines race', async () => {
    const store = await postgres.fresh();
    const [a, b] = [await store.open(), await store.open()];
    if (a.storage.kind !== 'postgres') throw new Error('expected PostgreSQL');
    const sessionId = (await a.storage.sessions.create({ workspace: '/ws' })).id;
    for (let i = 0; i < MAX_PENDING_WAKEUPS - 2; i++)
      await a.records.wakeups.add(sessionId, T0 + i, `n${i}`, T0);
    // Every add waits on the session's row, locked elsewhere, so all of them run at once.
    const blocker = await a.storage.pool.connect();
    try {
      await blocker.query('begin');
      await blocker.query('select 1 from hearth_sessions where id = $1 for update', [sessionId]);
      const racing = Promise.allSettled(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 ? a : b).storage.sessions.wakeups()!.add(sessionId, T0, `race ${i}`, T0),
        ),
      );
      await waitUntil(async () => {
        // Read afresh each time: in a transaction the activity view is a snapshot.
        await blocker.query('select pg_stat_clear_snapshot()');
        const { rows } = await blocker.query(
          `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock'`,
        );
        return rows[0].n >= 6;
      }, 'the adds to wait');
      await blocker.query('rollback');
      const settled = await racing;
      expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    } finally {
      blocker.release();
    }
    expect(await a.records.wakeups.list({ sessionId, pendingOnly: true })).toHaveLength(MAX_PENDING_WAKEUPS);
  });

  it('gives the library’s SchedulerService.connect the shared records: a job added on one machine is listed on another', async () => {
    const store = await postgres.fresh();
    const homes = [
      await mkdtemp(join(tmpdir(), 'hearth-connect-a-')),
      await mkdtemp(join(tmpdir(), 'hearth-connect-b-')),
    ];
    const [one, two] = await Promise.all(
      homes.map((home) => SchedulerService.connect({ storage: store.location, home, workspace: home })),
    );
    try {
      await one!.addJob({ id: 'nightly', name: 'nightly', schedule: 'daily 02:00', prompt: 'test' });
      expect((await two!.listJobs()).jobs.map((j) => j.id)).toEqual(['nightly']);
      await two!.setEnabled('nightly', false);
      expect((await one!.listJobs()).jobs[0]).toMatchObject({ id: 'nightly', enabled: false });
    } finally {
      await Promise.all([one!.close(), two!.close()]);
      for (const home of homes) await rm(home, { recursive: true, force: true });
    }
  });
});
