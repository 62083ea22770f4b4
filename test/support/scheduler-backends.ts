/**
 * The two backends of the scheduler's records, for suites that run against both: a real SQLite
 * file, and a private PostgreSQL server (test/support/postgres.ts) with a fresh database per
 * store. Each `open` is another handle on the same store, as another process would hold.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SchedulerStorage, SchedulerStorageOptions } from '../../src/store/scheduler-storage.js';
import { openStorage, type Storage } from '../../src/store/storage.js';
import { postgresBin, startPostgres, type TestPostgres } from './postgres.js';

export interface OpenedScheduler {
  storage: Storage;
  records: SchedulerStorage;
}

export interface SchedulerStore {
  /** Another handle on this store; PostgreSQL leases on the caller's clock unless told otherwise. */
  open(options?: Partial<SchedulerStorageOptions>): Promise<OpenedScheduler>;
  /** The PostgreSQL URL, or the SQLite file. */
  location: string;
}

export interface SchedulerBackend {
  name: 'SQLite' | 'PostgreSQL';
  /** PostgreSQL is not installed here (`apt-get install postgresql`; .ci/run installs it). */
  missing: boolean;
  /** Before the suite: starts the server, if any. */
  start(): Promise<void>;
  /** A new, empty store. */
  fresh(): Promise<SchedulerStore>;
  /** After each test: closes every handle opened since. */
  closeAll(): Promise<void>;
  /** After the suite. */
  stop(): Promise<void>;
}

function backend(
  name: SchedulerBackend['name'],
  missing: boolean,
  hooks: {
    start(): Promise<void>;
    stop(): Promise<void>;
    fresh(): Promise<string>;
    config(at: string): object;
  },
): SchedulerBackend {
  const opened: Storage[] = [];
  return {
    name,
    missing,
    start: hooks.start,
    stop: hooks.stop,
    async fresh() {
      const location = await hooks.fresh();
      return {
        location,
        async open(options = {}) {
          const storage = await openStorage(hooks.config(location));
          opened.push(storage);
          const records = await storage.scheduler({
            scope: 'test-home',
            leaseClock: 'caller',
            ...options,
          });
          return { storage, records };
        },
      };
    },
    async closeAll() {
      for (const storage of opened.splice(0)) await storage.close();
    },
  };
}

export function sqliteSchedulerBackend(): SchedulerBackend {
  const dirs: string[] = [];
  return backend('SQLite', false, {
    async start() {},
    async stop() {
      for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
    },
    async fresh() {
      const dir = await mkdtemp(join(tmpdir(), 'hearth-sched-store-'));
      dirs.push(dir);
      return join(dir, 'hearth.db');
    },
    config: (path) => ({ db_path: path }),
  });
}

export function postgresSchedulerBackend(): SchedulerBackend {
  let server: TestPostgres | undefined;
  return backend('PostgreSQL', !postgresBin(), {
    async start() {
      server = await startPostgres();
    },
    async stop() {
      await server?.stop();
    },
    fresh: () => server!.database(),
    config: (url) => ({ storage: url }),
  });
}

export const schedulerBackends = [sqliteSchedulerBackend, postgresSchedulerBackend];
