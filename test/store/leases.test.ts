/**
 * The one lease primitive (src/store/leases.ts) over both backends' lease tables (a real SQLite
 * file, a private PostgreSQL server), each holder on its own injected clock: renewed at a third of
 * its length and not before, taken over once it lapsed, lost (its signal aborted) when a renewal
 * finds it gone or none goes through before its expiry, and given back on release.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Lease } from '../../src/store/leases.js';
import type { StoredLeases } from '../../src/store/run-lease.js';
import { openStorage, type SqliteStorage, type Storage } from '../../src/store/storage.js';
import { ManualClock } from '../support/manual-clock.js';
import { postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { waitUntil } from '../support/wait.js';

const TTL = 30_000;

interface Backend {
  name: string;
  skip: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  open(label: string, clock: ManualClock): Promise<Storage>;
  /** The stored expiry of the lease; undefined when no row is left. */
  expiry(storage: Storage, id: string): Promise<number | undefined>;
}

function sqlite(): Backend {
  let dir = '';
  return {
    name: 'SQLite',
    skip: false,
    async start() {
      dir = await mkdtemp(join(tmpdir(), 'hearth-leases-'));
    },
    async stop() {
      if (dir) await rm(dir, { recursive: true, force: true });
    },
    open: (label, clock) =>
      openStorage({ db_path: join(dir, 'hearth.db') }, { holder: { label, clock, ttlMs: TTL } }),
    async expiry(storage, id) {
      const row = (storage as SqliteStorage).db
        .prepare('SELECT expires_at FROM session_leases WHERE session_id = ?')
        .get(id) as { expires_at: number } | undefined;
      return row?.expires_at;
    },
  };
}

function postgres(): Backend {
  let server: TestPostgres | undefined;
  return {
    name: 'PostgreSQL',
    // PostgreSQL is not installed here: `apt-get install postgresql` (.ci/run installs it).
    skip: !postgresBin(),
    async start() {
      server = await startPostgres();
    },
    async stop() {
      await server?.stop();
    },
    open: (label, clock) => openStorage({ storage: server!.url }, { holder: { label, clock, ttlMs: TTL } }),
    async expiry(storage, id) {
      if (storage.kind !== 'postgres') throw new Error('expected PostgreSQL');
      const { rows } = await storage.pool.query<{ expires_at: string }>(
        'select expires_at from hearth_session_leases where session_id = $1',
        [id],
      );
      return rows[0] ? Number(rows[0].expires_at) : undefined;
    },
  };
}

for (const backend of [sqlite(), postgres()]) {
  describe.skipIf(backend.skip)(`the lease primitive on ${backend.name}`, () => {
    const opened: Storage[] = [];
    beforeAll(() => backend.start(), 60_000);
    afterAll(async () => {
      for (const storage of opened) await storage.close();
      await backend.stop();
    });
    /** Two holders of one fresh lease (a session's row), each with its own clock (two processes). */
    async function pair() {
      let id = '';
      const holder = async (label: string) => {
        const clock = new ManualClock();
        const storage = await backend.open(label, clock);
        opened.push(storage);
        id ||= (await storage.sessions.create({ workspace: '/w' })).id;
        const lease = (storage.sessions.leases as StoredLeases).lease(id);
        return { clock, storage, lease, ops: (storage.sessions.leases as StoredLeases).ops(id) };
      };
      const [a, b] = [await holder('A'), await holder('B')];
      return { id, a, b };
    }

    it('renews at a third of its length, not before, and a take while held is a renewal', async () => {
      const { id, a } = await pair();
      expect(await a.lease.acquire()).toBe('acquired');
      const taken = a.clock.now();
      expect(await backend.expiry(a.storage, id)).toBe(taken + TTL);
      // The renewal, then the local deadline.
      expect(a.clock.pending).toEqual([TTL / 3, TTL]);
      a.clock.advance(TTL / 3 - 1);
      expect(await backend.expiry(a.storage, id)).toBe(taken + TTL);
      a.clock.advance(1);
      await waitUntil(async () => (await backend.expiry(a.storage, id)) === a.clock.now() + TTL, 'renewal');
      // The next renewal is a third later again, and the deadline moved with the expiry.
      await waitUntil(() => a.clock.pending.length === 2, 'the next renewal');
      expect([...a.clock.pending].sort((x, y) => x - y)).toEqual([TTL / 3, TTL]);
      a.clock.advance(1000);
      expect(await a.lease.acquire()).toBe('renewed');
      expect(await backend.expiry(a.storage, id)).toBe(a.clock.now() + TTL);
      expect(a.lease.lost.aborted).toBe(false);
      await a.lease.release();
    });

    it('is taken over once it lapsed, and the old holder learns it lost it at its next renewal', async () => {
      const { a, b } = await pair();
      expect(await a.lease.acquire()).toBe('acquired');
      expect(await b.lease.acquire()).toBe('held');
      expect(b.lease.held).toBe(false);
      // A hangs (its clock stands still, so it does not renew); on B's clock the lease lapses.
      b.clock.advance(TTL + 1);
      expect(await b.lease.acquire()).toBe('acquired');
      expect(b.lease.held).toBe(true);
      a.clock.advance(TTL / 3);
      await waitUntil(() => a.lease.lost.aborted, 'the loss');
      expect((a.lease.lost.reason as Error).message).toMatch(/was lost: another process took it over\.$/);
      expect(a.lease.held).toBe(false);
      expect(a.clock.pending).toEqual([]);
      expect(b.lease.lost.aborted).toBe(false);
      await b.lease.release();
    });

    it('is lost at its expiry when no renewal goes through, whatever the renewals still wait for', async () => {
      const { id, a, b } = await pair();
      const troubles: string[] = [];
      let calls = 0;
      // The same row, but renewals that fail, then one that never answers (a dead link).
      const stuck = new Lease(
        {
          ...a.ops,
          renew: () =>
            ++calls === 1 ? Promise.reject(new Error('connection refused')) : new Promise<boolean>(() => {}),
        },
        {
          ttlMs: TTL,
          clock: a.clock,
          name: 'The test lease',
          onTrouble: (err) => troubles.push(err.message),
        },
      );
      expect(await stuck.acquire()).toBe('acquired');
      a.clock.advance(TTL / 3);
      await waitUntil(() => troubles.length === 1, 'the failed renewal');
      await waitUntil(() => a.clock.pending.length === 2, 'the next renewal');
      a.clock.advance(TTL / 3);
      expect(stuck.lost.aborted).toBe(false);
      a.clock.advance(TTL / 3);
      expect(stuck.lost.aborted).toBe(true);
      expect((stuck.lost.reason as Error).message).toBe(
        'The test lease was lost: it lapsed before a renewal went through (connection refused).',
      );
      expect(troubles).toEqual(['connection refused']);
      // Its row is as the last write left it, and another takes it once that lapsed.
      expect(await backend.expiry(a.storage, id)).toBeDefined();
      b.clock.advance(TTL + 1);
      expect(await b.lease.acquire()).toBe('acquired');
      await b.lease.release();
    });

    it('without an expiry watch, renews on while one waits for an answer but never queues a second', async () => {
      const { a } = await pair();
      let calls = 0;
      let answer!: (renewed: boolean) => void;
      const patient = new Lease(
        {
          ...a.ops,
          renew: () => {
            calls++;
            return new Promise<boolean>((resolve) => {
              answer = resolve;
            });
          },
        },
        { ttlMs: TTL, clock: a.clock, name: 'The test lease', watchExpiry: false },
      );
      expect(await patient.acquire()).toBe('acquired');
      // An hour with the database away: 180 renewal times come and go while the first still waits.
      a.clock.advance(3_600_000);
      expect(calls).toBe(1);
      answer(true);
      await waitUntil(() => a.clock.pending.length === 1, 'the renewal timer');
      a.clock.advance(TTL / 3);
      expect(calls).toBe(2);
      answer(true);
      expect(patient.lost.aborted).toBe(false);
      await patient.release();
    });

    it('is given back on release: the row goes, the timers stop, and nothing counts as lost', async () => {
      const { id, a, b } = await pair();
      expect(await a.lease.acquire()).toBe('acquired');
      await a.lease.release();
      expect(a.clock.pending).toEqual([]);
      expect(a.lease.lost.aborted).toBe(false);
      expect(await backend.expiry(a.storage, id)).toBeUndefined();
      expect(await b.lease.acquire()).toBe('acquired');
      // A takes it again once B gave it back: a fresh hold with a fresh signal.
      await b.lease.release();
      expect(await a.lease.acquire()).toBe('acquired');
      expect(a.lease.held).toBe(true);
      await a.lease.release();
    });
  });
}
