/**
 * A session's run lease, what each backend does on its own (the contract both keep is in
 * test/store/contracts/run-lease.contract.test.ts). What only SQLite does, all processes being on one machine: a holder whose process is gone
 * (killed, or its pid now another process's) is taken over at once, while one this process cannot
 * judge (another host, another pid namespace) keeps the session until its lease lapses.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refused } from '../../src/store/run-lease.js';
import { openStorage, type SqliteStorage, type Storage } from '../../src/store/storage.js';
import { systemProcesses, thisProcess } from '../../src/util/process-identity.js';
import { ManualClock } from '../support/manual-clock.js';
import { postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { waitUntil, withDeadline } from '../support/wait.js';

const TTL = 30_000;

interface Backend {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A holder on the one store, as another process would be. */
  holder(label: string, clock: ManualClock): Promise<Storage>;
  /** The stored expiry of the session's lease; undefined when no row is left. */
  expiry(storage: Storage, sessionId: string): Promise<number | undefined>;
}

function sqliteBackend(): Backend & { path(): string } {
  let dir = '';
  return {
    async start() {
      dir = await mkdtemp(join(tmpdir(), 'hearth-lease-'));
    },
    async stop() {
      if (dir) await rm(dir, { recursive: true, force: true });
    },
    path: () => join(dir, 'hearth.db'),
    holder: (label, clock) =>
      openStorage({ db_path: join(dir, 'hearth.db') }, { holder: { label, clock, ttlMs: TTL } }),
    async expiry(storage, sessionId) {
      const row = (storage as SqliteStorage).db
        .prepare('SELECT expires_at FROM session_leases WHERE session_id = ?')
        .get(sessionId) as { expires_at: number } | undefined;
      return row?.expires_at;
    },
  };
}

describe('the run lease of a session on SQLite, whose holders are all on this machine', () => {
  const backend = sqliteBackend();
  const opened: Storage[] = [];
  const children: ChildProcess[] = [];
  beforeAll(() => backend.start());
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const storage of opened) await storage.close();
    await backend.stop();
  });
  const holder = async (label: string, clock = new ManualClock(Date.now())) => {
    const storage = (await backend.holder(label, clock)) as SqliteStorage;
    opened.push(storage);
    return storage;
  };

  /** Another process taking the session's lease; resolves with what it said once it tried. */
  async function holderProcess(session: string, label = 'the child'): Promise<[ChildProcess, string]> {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'test/support/lease-child.ts',
        JSON.stringify({ db: backend.path(), session, label }),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(child);
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const first = await withDeadline(lines.next(), `${label} to take the lease`);
    return [child, String(first.value)];
  }

  it('goes to exactly one of several processes taking it at once', async () => {
    const a = await holder('process A');
    const row = await a.sessions.create({ workspace: '/w' });
    const said = await Promise.all([1, 2, 3].map((n) => holderProcess(row.id, `child ${n}`)));
    const winners = said.filter(([, line]) => line === 'held');
    expect(winners).toHaveLength(1);
    const winner = `child ${said.indexOf(winners[0]!) + 1}`;
    expect(said.map(([, line]) => line).sort()).toEqual(['held', `refused: ${winner}`, `refused: ${winner}`]);
    expect(await a.sessions.leases.heldElsewhere(row.id)).toBe(winner);
    for (const [child] of said) child.kill('SIGKILL');
  });

  it('takes over at once from a holder that was killed, well before its lease lapses', async () => {
    const a = await holder('process A');
    const row = await a.sessions.create({ workspace: '/w' });
    const [child, said] = await holderProcess(row.id);
    expect(said).toBe('held');
    expect(await a.sessions.leases.take(row.id)).toEqual({ heldBy: 'the child' });
    expect(await a.sessions.leases.heldElsewhere(row.id)).toBe('the child');

    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    // The child's row still runs for most of a lease on this clock: only its process is gone.
    expect(await backend.expiry(a, row.id)).toBeGreaterThan(Date.now());
    expect(await a.sessions.leases.heldElsewhere(row.id)).toBeUndefined();
    const taken = await a.sessions.leases.take(row.id);
    expect(refused(taken)).toBe(false);
    if (!refused(taken)) await taken.release();
  });

  it('takes over from a pid that now is another process, and waits out holders it cannot judge', async () => {
    const a = await holder('process A');
    const me = thisProcess();
    // This test runs on Linux: records carry what tells a pid's processes apart.
    expect(me.identity).toMatch(/^[0-9a-f-]{36}\/pid:\[\d+\]\/\d+$/);
    const machine = me.identity!.slice(0, me.identity!.lastIndexOf('/'));
    const ticks = systemProcesses.startTicks(process.pid);
    const plant = (sessionId: string, fields: { host?: string; process: string | null; label: string }) =>
      a.db
        .prepare(
          'INSERT INTO session_leases (session_id, instance, host, pid, process, label, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        )
        .run(
          sessionId,
          `planted ${fields.label}`,
          fields.host ?? me.host,
          process.pid,
          fields.process,
          fields.label,
          Date.now() + TTL,
        );

    const cases = [
      // This pid, started at another time: the recorded process ended and its pid was reused.
      { label: 'an earlier process with this pid', process: `${machine}/${Number(ticks) - 1}`, free: true },
      // This very process (a storage object of it that is still running the session).
      { label: 'this process', process: me.identity, free: false },
      // The same pid in another pid namespace (a container sharing the host name): not ours to judge.
      { label: 'a container', process: `${machine.replace(/\[\d+\]/, '[1]')}/${ticks}`, free: false },
      {
        label: 'another boot',
        process: `00000000-0000-0000-0000-000000000000/${machine.split('/')[1]}/${ticks}`,
        free: false,
      },
      {
        label: 'another host',
        host: 'elsewhere.example',
        process: `${machine}/${Number(ticks) - 1}`,
        free: false,
      },
      // A record without identity (a Hearth on a system without /proc) beside one with it.
      { label: 'no identity', process: null, free: false },
    ];
    for (const c of cases) {
      const row = await a.sessions.create({ workspace: '/w' });
      plant(row.id, c);
      const taken = await a.sessions.leases.take(row.id);
      expect({ label: c.label, free: !refused(taken) }).toEqual({ label: c.label, free: c.free });
      expect(await a.sessions.leases.heldElsewhere(row.id)).toBe(c.free ? undefined : c.label);
      if (!refused(taken)) await taken.release();
    }
  });
});

describe.skipIf(!postgresBin())('the run lease of a session on PostgreSQL, on the server’s clock', () => {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('is lost at its expiry while a renewal still waits for the database', async () => {
    const url = await server!.database();
    const clock = new ManualClock();
    const a = await openStorage({ storage: url }, { holder: { label: 'machine A', clock, ttlMs: TTL } });
    if (a.kind !== 'postgres') throw new Error('expected PostgreSQL');
    const blocker = await a.pool.connect();
    try {
      const row = await a.sessions.create({ workspace: '/w' });
      const taken = await a.sessions.leases.take(row.id);
      if (refused(taken)) throw new Error(`refused: ${taken.heldBy}`);
      // The row is locked elsewhere, as a database behind a dead link leaves a statement waiting.
      await blocker.query('begin');
      await blocker.query('select 1 from hearth_session_leases where session_id = $1 for update', [row.id]);
      clock.advance(TTL / 3);
      await waitUntil(async () => {
        // Not on the blocker: inside its transaction the activity view would stay as first read.
        const { rows } = await a.pool.query(
          `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like 'update hearth_session_leases%'`,
        );
        return rows[0].n === 1;
      }, 'the renewal to wait for the lock');
      expect(taken.lost.aborted).toBe(false);
      clock.advance(TTL);
      expect(taken.lost.aborted).toBe(true);
      expect(String(taken.lost.reason)).toMatch(/lapsed before a renewal went through/);
      await blocker.query('rollback');
      await taken.release();
    } finally {
      blocker.release();
      await a.close();
    }
  });

  it('lapses by the database server’s clock, whatever the holders’ clocks say', async () => {
    const url = await server!.database();
    const open = (label: string) => openStorage({ storage: url }, { holder: { label, ttlMs: TTL } });
    const [a, b] = [await open('machine A'), await open('machine B')];
    if (a.kind !== 'postgres') throw new Error('expected PostgreSQL');
    // This database's server runs `offset` ms ahead of this machine, whose clock the holders read.
    const serverAhead = (offset: number) =>
      a.pool.query(`create or replace function hearth_now_ms() returns bigint language sql volatile as $$
        select (extract(epoch from clock_timestamp()) * 1000)::bigint + ${offset} $$`);
    try {
      const row = await a.sessions.create({ workspace: '/w' });
      await serverAhead(3_600_000);
      const taken = await a.sessions.leases.take(row.id);
      if (refused(taken)) throw new Error(`refused: ${taken.heldBy}`);
      const { rows } = await a.pool.query(
        'select expires_at - hearth_now_ms() as left from hearth_session_leases',
      );
      expect(Number(rows[0].left)).toBeGreaterThan(0);
      expect(Number(rows[0].left)).toBeLessThanOrEqual(TTL);
      expect(await b.sessions.leases.heldElsewhere(row.id)).toBe('machine A');

      // Past its expiry on the server's clock (A stopped renewing), B takes it over, though by
      // the machines' own clocks hardly any time went by.
      await serverAhead(3_600_000 + 2 * TTL);
      expect(await b.sessions.leases.heldElsewhere(row.id)).toBeUndefined();
      const takeover = await b.sessions.leases.take(row.id);
      expect(refused(takeover)).toBe(false);
      await taken.release();
      if (!refused(takeover)) await takeover.release();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
