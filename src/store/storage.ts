/**
 * The one place Hearth opens its store, once per process, from the config: the shared PostgreSQL
 * database when `storage` is set (postgres://..., or HEARTH_DATABASE_URL), else the SQLite file
 * `db_path` (default <hearth home>/hearth.db). The handle owns the one connection (the SQLite file,
 * or one `pg` pool), brings its schema up to date once, and hands out every store over it on
 * first use. Each store's backend module is imported only when asked for, and `pg` only when a URL
 * is configured: a one-shot SQLite run loads nothing it does not use.
 */
import { defaultDbPath } from '../config/sources.js';
import type { MemoryStorage } from '../memory/storage.js';
import type { PipelineStorage } from '../pipeline/storage.js';
import type { Clock } from '../util/clock.js';
import type { EvalResultStore } from './eval-results.js';
import type { EventLog } from './event-log.js';
import type { PgPool } from './postgres/connection.js';
import type { WorkQueue } from './postgres/queue.js';
import type { LeaseHolder } from './run-lease.js';
import type { SchedulerStorage, SchedulerStorageOptions } from './scheduler-storage.js';
import type { SessionStorage } from './session-storage.js';
import { type Db, openDatabase } from './sqlite/database.js';
import { SqliteSessionStorage } from './sqlite/sessions.js';

export interface EventLogOptions {
  /** Who appends, as other processes see it ("hearth worker on gpu-box"). */
  writer: string;
  onProblem?: (message: string) => void;
}

export interface MemoryStorageOptions {
  /** PostgreSQL: vectors per round trip of a nearest-neighbour scan (tests make it small). */
  vectorBatch?: number;
  /** SQLite: search vectors in process even where sqlite-vec loads (tests). */
  vectors?: 'auto' | 'in-process';
  now?: () => number;
}

export interface PlanStorageOptions {
  /** How long a claim on a task or workspace lasts without renewal (`pipeline.lease`, ms). */
  leaseMs?: number;
  clock?: Clock;
}

interface StorageBase {
  /** Sessions with their usage, audit, run leases and wake-ups. */
  readonly sessions: SessionStorage;
  /** The event log; PostgreSQL adds its LISTEN connection only once it is watched. The caller closes it. */
  events(options: EventLogOptions): Promise<EventLog>;
  /** The scheduler's records (jobs, runs, its lease) and wake-ups. */
  scheduler(options: SchedulerStorageOptions): Promise<SchedulerStorage>;
  /** Long-term memory with its proposals. */
  memory(options?: MemoryStorageOptions): Promise<MemoryStorage>;
  /** The pipeline's plans, tasks and journal. */
  plans(options?: PlanStorageOptions): Promise<PipelineStorage>;
  /** `hearth eval`'s runs and results. */
  evals(): Promise<EvalResultStore>;
  /** Ends the connection and every store over it; a `db` passed in stays open. Once, however often called. */
  close(): Promise<void>;
}

export interface SqliteStorage extends StorageBase {
  kind: 'sqlite';
  db: Db;
  path: string;
}

export interface PostgresStorage extends StorageBase {
  kind: 'postgres';
  /** The one pool of this process (the work queue runs on it too). */
  pool: PgPool;
  url: string;
  /** The shared work queue over the pool (graphile-worker loads on first use); closing it leaves the pool open. */
  queue(): Promise<WorkQueue>;
}

export type Storage = SqliteStorage | PostgresStorage;

export interface StorageConfig {
  storage?: string;
  db_path?: string;
}

export interface OpenStorageOptions {
  /** An already open SQLite database (tests, a caller that shares one); used when no `storage` URL is set. */
  db?: Db;
  /** How this process is named in the run leases it takes, its clock and lease length. */
  holder?: LeaseHolder;
  /** PostgreSQL: who this process is (`hearth <role> <pid>` in pg_stat_activity), default "cli". */
  role?: string;
  /** PostgreSQL: the most connections the pool opens (a worker needs more than a one-shot run). */
  poolSize?: number;
}

/** The lease of a pipeline claim when the config does not say (`pipeline.lease`). */
export const DEFAULT_PLAN_LEASE_MS = 60_000;

/** Opens the configured backend, bringing its schema up to date. */
export async function openStorage(config: StorageConfig, options: OpenStorageOptions = {}): Promise<Storage> {
  if (config.storage) {
    const { openPostgresStorage } = await import('./postgres/storage.js');
    return openPostgresStorage(config.storage, options);
  }
  return openSqliteStorage(config, options);
}

/** The SQLite backend, opened at once (SQLite opens synchronously); `storage` in the config is not looked at. */
export function openSqliteStorage(config: StorageConfig, options: OpenStorageOptions = {}): SqliteStorage {
  const path = defaultDbPath(config);
  return sqliteStorage(options.db ?? openDatabase(path), path, !options.db, options.holder);
}

/** The SQLite backend over an open database; `owned`: closing the storage closes `db`. */
export function sqliteStorage(db: Db, path: string, owned: boolean, holder?: LeaseHolder): SqliteStorage {
  const sessions = new SqliteSessionStorage(db, path, owned, holder);
  return {
    kind: 'sqlite',
    db,
    path,
    sessions,
    async events() {
      const { SqliteEventLog } = await import('./sqlite/event-log.js');
      return new SqliteEventLog(db);
    },
    async scheduler() {
      const { SqliteSchedulerStorage } = await import('./sqlite/scheduler.js');
      return new SqliteSchedulerStorage(db);
    },
    async memory(options = {}) {
      const { SqliteMemoryStorage } = await import('./sqlite/memory.js');
      return SqliteMemoryStorage.open(db, options);
    },
    async plans(options = {}) {
      const [{ SqlitePlanStore }, { SqliteJournal }] = await Promise.all([
        import('./sqlite/plans.js'),
        import('./sqlite/journal.js'),
      ]);
      const now = options.clock ? () => options.clock!.now() : undefined;
      return {
        plans: new SqlitePlanStore(db, now),
        journal: new SqliteJournal(db, options.clock),
        close: async () => {},
      };
    },
    async evals() {
      const { SqliteEvalResults } = await import('./sqlite/eval-results.js');
      return new SqliteEvalResults(db);
    },
    close: () => sessions.close(),
  };
}
