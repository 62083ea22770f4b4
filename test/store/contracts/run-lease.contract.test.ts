/**
 * The run lease contract (src/store/run-lease.ts), one suite over both backends: two holders with
 * their own injected clocks, as two processes; a lease taken atomically, renewed every third of its
 * life, taken over once it lapsed, lost by the holder that stopped renewing, released for the next.
 * What only one backend does (SQLite taking over from a dead pid at once; PostgreSQL judging expiry
 * on the server's clock) stays in test/store/run-lease.test.ts.
 */
import { beforeEach, expect, it } from 'vitest';
import { type RunLease, refused } from '../../../src/store/run-lease.js';
import type { SessionStorage } from '../../../src/store/session-storage.js';
import { ManualClock } from '../../support/manual-clock.js';
import { describeEachBackend, type StorePlace } from '../../support/store-backends.js';
import { waitUntil } from '../../support/wait.js';

const TTL = 30_000;

describeEachBackend('the run lease of a session', (backend) => {
  let place: StorePlace;
  beforeEach(async () => {
    place = await backend.fresh();
  });
  /** Another process taking leases as `label`, on its own clock. */
  const holder = (label: string, clock = new ManualClock()): Promise<SessionStorage> =>
    place.sessions({ label, clock, ttlMs: TTL });
  const take = async (store: SessionStorage, id: string): Promise<RunLease> => {
    const taken = await store.leases.take(id);
    if (refused(taken)) throw new Error(`refused: ${taken.heldBy}`);
    return taken;
  };

  it('is taken by one holder at a time, renewed while held, and taken over once it lapsed', async () => {
    const [clockA, clockB] = [new ManualClock(), new ManualClock()];
    const a = await holder('process A', clockA);
    const b = await holder('process B', clockB);
    const row = await a.create({ workspace: '/w' });

    const taken = await take(a, row.id);
    expect(await b.leases.take(row.id)).toEqual({ heldBy: 'process A' });
    expect(await b.leases.heldElsewhere(row.id)).toBe('process A');
    expect(await a.leases.heldElsewhere(row.id)).toBeUndefined();
    // Within one holder a session runs once at a time too.
    expect(await a.leases.take(row.id)).toEqual({ heldBy: 'another run in process A' });

    // Renewed every third of its length, on a timer (the other timer is its expiry, at which it is
    // lost unless a renewal went through): once renewed, B's clock past the first expiry finds it held.
    expect(clockA.pending).toEqual([TTL / 3, TTL]);
    clockA.advance(TTL / 3);
    await waitUntil(() => clockA.pending.length === 2, 'the renewal, which sets both timers again');
    clockB.advance(TTL + 1);
    expect(refused(await b.leases.take(row.id))).toBe(true);

    // A stops renewing (as a hung process would): past its expiry on B's clock, B takes over,
    // and A finds out at its next renewal.
    clockB.advance(TTL);
    const takeover = await take(b, row.id);
    clockA.advance(TTL / 3);
    await waitUntil(() => taken.lost.aborted, 'A hears it lost the lease');
    expect(String(taken.lost.reason)).toMatch(/another process took it over/);
    await taken.release(); // lost: releasing deletes nothing of B's
    expect(await a.leases.heldElsewhere(row.id)).toBe('process B');

    await takeover.release();
    await takeover.release(); // idempotent
    expect(await a.leases.heldElsewhere(row.id)).toBeUndefined();
    // Released, it is free for the next run at once, here or there.
    await (await take(a, row.id)).release();
  });

  it('tells the run it lost the lease when a renewal finds its row gone', async () => {
    const clock = new ManualClock();
    const a = await holder('process A', clock);
    const row = await a.create({ workspace: '/w' });
    const taken = await take(a, row.id);
    // The session vanishes (another machine removed it): renewals find no row of A's.
    await (await holder('process B')).remove(row.id);
    clock.advance(TTL / 3);
    await waitUntil(() => taken.lost.aborted, 'A hears it lost the lease');
    expect(String(taken.lost.reason)).toMatch(/The run lease of session .* was lost/);
    await taken.release();
  });

  it('keeps the leases of two sessions apart', async () => {
    const a = await holder('process A');
    const b = await holder('process B');
    const [one, two] = [await a.create({ workspace: '/w' }), await a.create({ workspace: '/w' })];
    const held = await take(a, one.id);
    const other = await take(b, two.id);
    expect(await b.leases.heldElsewhere(one.id)).toBe('process A');
    expect(await a.leases.heldElsewhere(two.id)).toBe('process B');
    await held.release();
    await other.release();
  });

  it('goes to exactly one of several holders taking it at once', async () => {
    const holders = await Promise.all([1, 2, 3, 4].map((k) => holder(`holder ${k}`)));
    const row = await holders[0]!.create({ workspace: '/w' });
    const results = await Promise.all(holders.map((h) => h.leases.take(row.id)));
    expect(results.filter((r) => !refused(r))).toHaveLength(1);
    expect(results.filter(refused).map((r) => r.heldBy)).toHaveLength(3);
    for (const r of results) if (!refused(r)) await r.release();
  });

  it('goes with its session when the session is deleted', async () => {
    const a = await holder('process A');
    const b = await holder('process B');
    const row = await a.create({ workspace: '/w', id: 'reused' });
    const taken = await take(a, row.id);
    await a.remove(row.id);
    // A session made again under the same id is free at once: no lease row outlived the first.
    await b.create({ workspace: '/w', id: 'reused' });
    expect(await b.leases.heldElsewhere('reused')).toBeUndefined();
    await (await take(b, 'reused')).release();
    await taken.release();
  });
});
