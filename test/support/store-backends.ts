/**
 * Every store on both backends, for the contract suites in test/store/contracts/: a new SQLite
 * file in a temp folder, or a new database on one private PostgreSQL server per test file
 * (test/support/postgres.ts). This is the one place the contract tests open a backend, through
 * the one `Storage` handle (src/store/storage.ts); the suites themselves import only the store
 * interfaces and their row types.
 *
 * `describeEachBackend(title, (backend) => ...)` runs the body once per backend; inside a test,
 * `await backend.fresh()` gives an empty store, and each opener on it (`sessions()`, `events()`, ...)
 * is another handle on that store, as another process would hold. Everything opened is closed
 * after each test.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import type { MemoryStorage } from '../../src/memory/storage.js';
import type { PipelineJournal } from '../../src/pipeline/journal.js';
import type { PlanStore } from '../../src/pipeline/plan-store.js';
import type { EvalResultStore } from '../../src/store/eval-results.js';
import type { EventLog } from '../../src/store/event-log.js';
import type { LeaseHolder } from '../../src/store/run-lease.js';
import type { SchedulerStorage, SchedulerStorageOptions } from '../../src/store/scheduler-storage.js';
import type { SessionStorage } from '../../src/store/session-storage.js';
import { openStorage, type Storage } from '../../src/store/storage.js';
import type { Clock } from '../../src/util/clock.js';
import { postgresBin, startPostgres, type TestPostgres } from './postgres.js';

export type BackendName = 'SQLite' | 'PostgreSQL';

/** One empty store; every opener gives another handle on it. */
export interface StorePlace {
  /** Where it is: the SQLite file, or the postgres:// URL. */
  readonly location: string;
  /** Sessions (with usage, audit, journals and run leases), taking leases as `holder`. */
  sessions(holder?: LeaseHolder): Promise<SessionStorage>;
  /** The scheduler's records, in the scope `test-home`, leases on the caller's clock unless told. */
  scheduler(options?: Partial<SchedulerStorageOptions>): Promise<SchedulerStorage>;
  /** The gateway's event log, appending as `writer`. */
  events(writer?: string): Promise<EventLog>;
  /** Long-term memory with its proposals; vectors searched in process (both backends alike). */
  memory(options?: { now?: () => number }): Promise<MemoryStorage>;
  /** The pipeline's plans and journal, claims lasting `leaseSeconds` (PostgreSQL) on `clock`. */
  pipeline(options?: { clock?: Clock; leaseSeconds?: number }): Promise<{
    plans: PlanStore;
    journal: PipelineJournal;
  }>;
  /** `hearth eval`'s runs and results. */
  evals(): Promise<EvalResultStore>;
}

export interface BackendUnderTest {
  name: BackendName;
  /** A new, empty store on this backend. */
  fresh(): Promise<StorePlace>;
}

/** Why the PostgreSQL half is skipped, or undefined when it runs. */
const NO_POSTGRES = postgresBin()
  ? undefined
  : 'PostgreSQL is not installed (apt-get install postgresql; .ci/run installs it)';

/**
 * Runs `body` against SQLite and against PostgreSQL; where PostgreSQL is not installed its half is
 * skipped and its title says why (CI installs it, so there it always runs).
 */
export function describeEachBackend(title: string, body: (backend: BackendUnderTest) => void): void {
  describe(`${title} [SQLite]`, () => {
    const dirs: string[] = [];
    const closers = useClosers();
    afterAll(async () => {
      for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
    });
    body({
      name: 'SQLite',
      async fresh() {
        const dir = await mkdtemp(join(tmpdir(), 'hearth-contract-'));
        dirs.push(dir);
        const path = join(dir, 'hearth.db');
        return place(path, { db_path: path }, closers);
      },
    });
  });
  const pgTitle = `${title} [PostgreSQL]${NO_POSTGRES ? ` (skipped: ${NO_POSTGRES})` : ''}`;
  describe.skipIf(NO_POSTGRES !== undefined)(pgTitle, () => {
    let server: TestPostgres | undefined;
    const closers = useClosers();
    beforeAll(async () => {
      server = await startPostgres();
    }, 120_000);
    afterAll(async () => {
      await server?.stop();
    });
    body({
      name: 'PostgreSQL',
      async fresh() {
        const url = await server!.database();
        return place(url, { storage: url }, closers);
      },
    });
  });
}

type Closers = Array<() => Promise<void>>;

/** What a test opened, closed after it, newest first (a store before the handle it lives on). */
function useClosers(): Closers {
  const closers: Closers = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  return closers;
}

function place(
  location: string,
  config: { storage?: string; db_path?: string },
  closers: Closers,
): StorePlace {
  const storage = async (holder?: LeaseHolder): Promise<Storage> => {
    const opened = await openStorage(config, holder ? { holder } : {});
    closers.push(() => opened.close());
    return opened;
  };
  return {
    location,
    sessions: async (holder) => (await storage(holder)).sessions,
    async scheduler(options = {}) {
      return (await storage()).scheduler({ scope: 'test-home', leaseClock: 'caller', ...options });
    },
    async events(writer = 'the test') {
      const log = await (await storage()).events({ writer });
      closers.push(() => log.close());
      return log;
    },
    async memory(options = {}) {
      const memory = await (await storage()).memory({ vectors: 'in-process', ...options });
      closers.push(() => memory.close());
      return memory;
    },
    async pipeline(options = {}) {
      const opened = await (await storage()).plans({
        leaseMs: (options.leaseSeconds ?? 60) * 1000,
        ...(options.clock ? { clock: options.clock } : {}),
      });
      closers.push(() => opened.close());
      return { plans: opened.plans, journal: opened.journal };
    },
    async evals() {
      return (await storage()).evals();
    },
  };
}
