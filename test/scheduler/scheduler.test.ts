/**
 * The scheduler's rules (catch-up, overlap, manual runs, leases) over its records, run against
 * both backends: a SQLite file and a private PostgreSQL (skipped, saying so, where it is not
 * installed). Leases follow the test's clock in both.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defineJob, type JobInput } from '../../src/scheduler/job-definitions.js';
import { type RunRequest, Scheduler, type SchedulerEvent } from '../../src/scheduler/scheduler.js';
import type { ElapsedSources } from '../../src/scheduler/tick-gap.js';
import type { RunOutcome } from '../../src/store/rows.js';
import { ManualClock } from '../support/manual-clock.js';
import { type SchedulerStore, schedulerBackends } from '../support/scheduler-backends.js';
import { waitUntil } from '../support/wait.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const START = Date.parse('2025-06-02T12:00:00Z');

/** A runner whose runs end when the test says (or at once, with `auto`). */
function heldRunner(auto = true) {
  const calls: RunRequest[] = [];
  const pending: Array<(outcome: RunOutcome) => void> = [];
  const runner = (request: RunRequest) => {
    calls.push(request);
    if (auto) return Promise.resolve<RunOutcome>({ status: 'ok', promptTokens: 10, completionTokens: 2 });
    return new Promise<RunOutcome>((resolve) => pending.push(resolve));
  };
  return { runner, calls, finishNext: () => pending.shift()?.({ status: 'ok' }) };
}

const daily = (overrides: Partial<JobInput> = {}): JobInput => ({
  id: 'report',
  name: 'report',
  schedule: 'daily 09:00',
  timezone: 'UTC',
  prompt: 'write the report',
  ...overrides,
});

/** Ticks, lets the runs it started finish, then moves the clock on. */
async function step(scheduler: Scheduler, clock: ManualClock, ms: number) {
  await scheduler.tick();
  await scheduler.idle();
  clock.advance(ms);
}

for (const make of schedulerBackends) {
  const backend = make();
  describe.skipIf(backend.missing)(`the scheduler on ${backend.name}`, () => {
    let dir: string;
    let database: SchedulerStore;
    beforeAll(() => backend.start(), 60_000);
    afterAll(() => backend.stop());
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'hearth-sched-'));
      database = await backend.fresh();
    });
    afterEach(async () => {
      await backend.closeAll();
      await rm(dir, { recursive: true, force: true });
    });

    /** A scheduler on its own handle of the test's store (as its own process). */
    async function setup(
      jobs: JobInput[],
      runner = heldRunner().runner,
      clock = new ManualClock(START),
      onEvent?: (event: SchedulerEvent) => void,
      /** Whose Hearth home it schedules for (PostgreSQL: one lease each; SQLite: one lease in all). */
      scope = 'test-home',
      /** Default: as if the machine slept through whatever the test's clock skips. */
      elapsed: ElapsedSources = { monotonic: () => 0, sinceBoot: () => clock.now() },
    ) {
      const { storage, records: store } = await database.open({ scope });
      const scheduler = new Scheduler({
        store,
        sessions: storage.sessions,
        loadJobs: async () => ({ jobs: jobs.map((j) => defineJob(j, 'test', dir)), problems: [] }),
        runner,
        workspace: dir,
        clock,
        onEvent,
        elapsed,
      });
      return { store, scheduler, clock };
    }

    describe('catch-up after a simulated three-day sleep', () => {
      async function sleepThreeDays(catchUp: 'skip' | 'once' | 'all') {
        const held = heldRunner();
        const { store, scheduler, clock } = await setup([daily({ catch_up: catchUp })], held.runner);
        await step(scheduler, clock, 3 * DAY); // registered at 12:00; asleep through three 09:00 slots
        await scheduler.tick();
        await scheduler.idle();
        return { runs: (await store.runs({ jobId: 'report' })).reverse(), calls: held.calls };
      }

      it('once: one run (the latest), the others recorded as skipped', async () => {
        const { runs, calls } = await sleepThreeDays('once');
        expect(
          runs.map((r) => [new Date(r.slotAt!).toISOString().slice(0, 10), r.status, r.caughtUp]),
        ).toEqual([
          ['2025-06-03', 'skipped', false],
          ['2025-06-04', 'skipped', false],
          ['2025-06-05', 'ok', true],
        ]);
        expect(runs[0]!.reason).toMatch(/missed: the machine was asleep for 3 days; made up once/);
        expect(calls).toHaveLength(1);
      });

      it('all: three runs, one after another', async () => {
        const { runs, calls } = await sleepThreeDays('all');
        expect(runs.map((r) => [r.status, r.caughtUp])).toEqual([
          ['ok', true],
          ['ok', true],
          ['ok', true],
        ]);
        expect(calls.map((c) => c.run.slotAt)).toEqual(runs.map((r) => r.slotAt));
      });

      it('skip: three skipped records that say why, no run', async () => {
        const { runs, calls } = await sleepThreeDays('skip');
        expect(runs.map((r) => r.status)).toEqual(['skipped', 'skipped', 'skipped']);
        expect(runs.map((r) => r.reason)).toEqual(
          Array(3).fill('missed: the machine was asleep for 3 days (catch_up: skip)'),
        );
        expect(calls).toHaveLength(0);
      });

      it('a clock set forward while the scheduler runs is told as a jump, not as a stopped scheduler', async () => {
        const clock = new ManualClock(START);
        const jumped = { monotonic: () => 0, sinceBoot: () => 0 };
        const { store, scheduler } = await setup(
          [daily({ catch_up: 'skip' })],
          undefined,
          clock,
          undefined,
          undefined,
          jumped,
        );
        await step(scheduler, clock, 3 * DAY);
        await scheduler.tick();
        const runs = await store.runs({ jobId: 'report' });
        expect(runs.map((r) => r.reason)).toEqual(
          Array(3).fill('missed: the clock jumped forward by 3 days (catch_up: skip)'),
        );
      });

      it('slots missed before a scheduler started say that no scheduler was running', async () => {
        const clock = new ManualClock(START);
        const first = await setup([daily({ catch_up: 'skip' })], undefined, clock);
        await step(first.scheduler, clock, 0);
        await first.scheduler.stop();
        clock.advance(3 * DAY);
        const { store, scheduler } = await setup([daily({ catch_up: 'skip' })], undefined, clock);
        await scheduler.tick();
        const runs = await store.runs({ jobId: 'report' });
        expect(runs.map((r) => r.reason)).toEqual(
          Array(3).fill('missed: no scheduler was running (catch_up: skip)'),
        );
      });

      it('all is bounded: at most 24 missed runs are made up', async () => {
        const held = heldRunner();
        const { store, scheduler, clock } = await setup(
          [daily({ schedule: 'every 1h', catch_up: 'all' })],
          held.runner,
        );
        await step(scheduler, clock, 30 * HOUR + 5 * 60_000); // every slot missed by more than two minutes
        await scheduler.tick();
        await scheduler.idle();
        const runs = await store.runs({ jobId: 'report', limit: 100 });
        expect(runs).toHaveLength(30);
        expect(runs.filter((r) => r.status === 'ok')).toHaveLength(24);
        expect(runs.filter((r) => r.status === 'skipped')[0]!.reason).toMatch(/more than 24 to make up/);
      });
    });

    describe('on time', () => {
      it('a slot seen on time runs once, and is not run again on the next tick', async () => {
        const held = heldRunner();
        const { store, scheduler, clock } = await setup([daily()], held.runner);
        await step(scheduler, clock, 21 * HOUR); // to 09:00 the next day
        await step(scheduler, clock, 1000);
        await step(scheduler, clock, 1000);
        expect(held.calls).toHaveLength(1);
        const [run] = await store.runs({ jobId: 'report' });
        expect(run).toMatchObject({ status: 'ok', caughtUp: false, promptTokens: 10, completionTokens: 2 });
        expect(run!.startedAt).toBe(Date.parse('2025-06-03T09:00:00Z'));
      });

      it('the loop wakes at the slot time on the injected clock', async () => {
        const held = heldRunner();
        // A minute before the slot: the loop sleeps one poll (15 s) at a time until then, and each
        // wake is a round of queries, too many for a slow shared database over half an hour.
        const clock = new ManualClock(START + 29 * 60_000);
        let finished!: () => void;
        const ended = new Promise<void>((resolve) => {
          finished = resolve;
        });
        let started = false;
        const { scheduler } = await setup([daily({ schedule: 'hourly :30' })], held.runner, clock, (e) => {
          if (e.type === 'started') started = true;
          if (e.type === 'finished') finished();
        });
        scheduler.start();
        await clock.nextTimer(15_000); // nothing due before 12:30: it sleeps one poll at a time
        for (let i = 0; i < 2; i++) await clock.elapse(15_000);
        expect(held.calls).toHaveLength(0);
        // Until the run starts, from one sleep of the loop (at most a poll) to the next. The leases'
        // renewals are timers too (a third of the 60 s lease and more), pending while held.
        const sleeping = () => clock.pending.filter((ms) => ms <= 15_000);
        while (!started) {
          await waitUntil(() => started || sleeping().length > 0, 'the loop to sleep');
          if (!started) clock.advance(Math.min(...sleeping()));
        }
        await ended;
        expect(held.calls[0]!.run.slotAt).toBe(Date.parse('2025-06-02T12:30:00Z'));
        await scheduler.stop();
      });
    });

    describe('overlap', () => {
      it('skip: a slot that comes while the previous run goes is recorded as skipped', async () => {
        const held = heldRunner(false);
        const { store, scheduler, clock } = await setup(
          [daily({ schedule: 'every 1h', overlap: 'skip' })],
          held.runner,
        );
        await scheduler.tick();
        clock.advance(HOUR);
        await scheduler.tick(); // the 13:00 run starts and does not end
        clock.advance(HOUR);
        await scheduler.tick(); // 14:00 comes while it goes
        held.finishNext();
        await scheduler.idle();
        const runs = (await store.runs({ jobId: 'report' })).reverse();
        expect(runs.map((r) => r.status)).toEqual(['ok', 'skipped']);
        expect(runs[1]!.reason).toBe('the previous run was still going (overlap: skip)');
      });

      it('queue: one run waits and starts when the previous ends; a third is skipped', async () => {
        const held = heldRunner(false);
        const { store, scheduler, clock } = await setup(
          [daily({ schedule: 'every 1h', overlap: 'queue' })],
          held.runner,
        );
        await scheduler.tick();
        for (let i = 0; i < 3; i++) {
          clock.advance(HOUR);
          await scheduler.tick();
        }
        expect(held.calls).toHaveLength(1);
        held.finishNext();
        // The waiting one starts as the first ends.
        await waitUntil(() => held.calls.length === 2, 'the queued run to start');
        held.finishNext();
        await scheduler.idle();
        const runs = (await store.runs({ jobId: 'report' })).reverse();
        expect(runs.map((r) => r.status)).toEqual(['ok', 'ok', 'skipped']);
        expect(runs[2]!.reason).toMatch(/overlap: queue holds one/);
      });
    });

    describe('manual runs', () => {
      it('a manual run is recorded on its own and does not take the next slot', async () => {
        const held = heldRunner();
        const { store, scheduler, clock } = await setup([daily()], held.runner);
        await scheduler.tick();
        clock.advance(HOUR);
        const manual = await scheduler.runNow('report');
        expect(manual).toMatchObject({ kind: 'manual', slotAt: null, status: 'ok' });
        clock.advance(20 * HOUR); // 09:00 next day
        await scheduler.tick();
        await scheduler.idle();
        const runs = await store.runs({ jobId: 'report' });
        expect(runs.map((r) => [r.kind, r.status])).toEqual([
          ['scheduled', 'ok'],
          ['manual', 'ok'],
        ]);
        expect(runs[0]!.slotAt).toBe(Date.parse('2025-06-03T09:00:00Z'));
      });
    });

    describe('leases', () => {
      it('a second scheduler on the same database stands by, then takes over once the lease expires', async () => {
        const held = heldRunner();
        // One clock each: a killed process's clock (and so its lease renewals) stops for good.
        const clockA = new ManualClock(START);
        const clockB = new ManualClock(START);
        const a = await setup([daily({ schedule: 'every 1h' })], held.runner, clockA);
        const b = await setup([daily({ schedule: 'every 1h' })], held.runner, clockB);
        await a.scheduler.tick();
        await b.scheduler.tick();
        expect([a.scheduler.isLeader, b.scheduler.isLeader]).toEqual([true, false]);
        clockA.advance(HOUR);
        clockB.advance(HOUR);
        // In turn: an hour's jump lapses a's lease on b's clock until a renews it (as a's renewal
        // timer does every 20 s in real time), and the two racing for it is not what is tested here.
        await a.scheduler.tick();
        await b.scheduler.tick();
        await a.scheduler.idle();
        // a is killed: nothing of it runs again; b takes over after its lease lapses.
        clockB.advance(2 * HOUR);
        await b.scheduler.tick();
        await b.scheduler.idle();
        expect(b.scheduler.isLeader).toBe(true);
        const slots = (await a.store.runs({ jobId: 'report' })).map((r) => r.slotAt);
        expect(new Set(slots).size).toBe(slots.length);
        expect(slots).toHaveLength(3);
      });

      it('a run whose process died is recorded as interrupted, not run again', async () => {
        const dead = heldRunner(false);
        const a = await setup([daily({ schedule: 'every 1h' })], dead.runner, new ManualClock(START));
        await a.scheduler.tick();
        a.clock.advance(HOUR);
        await a.scheduler.tick(); // the run starts; then its process "dies": its clock never moves again
        const live = heldRunner();
        const b = await setup(
          [daily({ schedule: 'every 1h' })],
          live.runner,
          new ManualClock(START + HOUR + 30_000),
        );
        await b.scheduler.tick();
        expect(b.scheduler.isLeader).toBe(false); // the 60 s lease still holds
        b.clock.advance(HOUR - 30_000);
        await b.scheduler.tick();
        await b.scheduler.idle();
        const [first, second] = (await b.store.runs({ jobId: 'report' })).reverse();
        expect(first).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^interrupted/) });
        expect(second!.slotAt).toBe(START + 2 * HOUR);
        expect(live.calls.map((c) => c.run.slotAt)).toEqual([START + 2 * HOUR]);
      });

      it('a run of a machine that died is recovered by another machine’s scheduler once its lease lapsed', async () => {
        const dead = heldRunner(false);
        const job = daily({ schedule: 'every 1h' });
        const a = await setup([job], dead.runner, new ManualClock(START), undefined, 'machine-a');
        await a.scheduler.tick();
        a.clock.advance(HOUR);
        await a.scheduler.tick(); // the run starts on machine a, which then dies
        const live = heldRunner();
        const later = new ManualClock(START + HOUR + 30_000);
        const b = await setup([job], live.runner, later, undefined, 'machine-b');
        await b.scheduler.tick();
        expect(await b.store.runs({ jobId: 'report' })).toMatchObject([{ status: 'running' }]); // its lease holds
        later.advance(HOUR - 30_000);
        await b.scheduler.tick();
        await b.scheduler.idle();
        const [first, second] = (await b.store.runs({ jobId: 'report' })).reverse();
        expect(first).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^interrupted/) });
        expect(second).toMatchObject({ slotAt: START + 2 * HOUR, status: 'ok' });
        expect(live.calls.map((c) => c.run.slotAt)).toEqual([START + 2 * HOUR]);
      });
    });
  });
}
