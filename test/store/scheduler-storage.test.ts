/**
 * What the scheduler's records (store/scheduler-storage.ts) do on PostgreSQL alone: leases on the
 * server's clock, adds racing on a locked row, the library connecting to shared records. The
 * contract both backends keep is test/store/contracts/scheduler.contract.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SchedulerService } from '../../src/scheduler/service.js';
import type { NewRun } from '../../src/store/rows.js';
import { MAX_PENDING_WAKEUPS } from '../../src/store/scheduler-storage.js';
import { schedulerBackends } from '../support/scheduler-backends.js';
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
