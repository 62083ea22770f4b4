/**
 * Where the pipeline keeps its plans, tasks, log, journal and pause flags: the shared PostgreSQL
 * database when `storage` is set (in the config or HEARTH_DATABASE_URL), else the session
 * database. The same rule as memory's (`setup/memory-access.ts`); both move into one storage
 * factory once sessions have two backends. Each backend's code is imported only when chosen, so a
 * SQLite user never loads `pg`.
 */
import type { Config } from '../config/schema.js';
import type { Db } from '../store/sqlite/database.js';
import type { Clock } from '../util/clock.js';
import type { PipelineJournal } from './journal.js';
import type { PlanStore } from './plan-store.js';

export interface PipelineStorage {
  plans: PlanStore;
  journal: PipelineJournal;
  /**
   * Closes what was opened for it (PostgreSQL's pool), once however often it is called; the
   * session database stays its owner's.
   */
  close(): Promise<void>;
}

/** The lease when the config does not say (`pipeline.lease`, seconds). */
const DEFAULT_LEASE_SECONDS = 60;

export async function openPipelineStorage(
  config: Pick<Config, 'storage'> & { pipeline?: Pick<Config['pipeline'], 'lease'> },
  database: () => Db,
  options: { clock?: Clock } = {},
): Promise<PipelineStorage> {
  const now = options.clock ? () => options.clock!.now() : undefined;
  if (config.storage) {
    const { openPostgres } = await import('../store/postgres/connection.js');
    const { PostgresPlanStore } = await import('../store/postgres/plans.js');
    const { PostgresJournal } = await import('../store/postgres/journal.js');
    const pool = await openPostgres(config.storage);
    const leaseMs = (config.pipeline?.lease ?? DEFAULT_LEASE_SECONDS) * 1000;
    let closed: Promise<void> | undefined;
    return {
      plans: new PostgresPlanStore(pool, leaseMs, now),
      journal: new PostgresJournal(pool, options.clock),
      close: () => {
        closed ??= pool.end();
        return closed;
      },
    };
  }
  const { SqlitePlanStore } = await import('../store/sqlite/plans.js');
  const { SqliteJournal } = await import('../store/sqlite/journal.js');
  const db = database();
  return {
    plans: new SqlitePlanStore(db, now),
    journal: new SqliteJournal(db, options.clock),
    close: async () => {},
  };
}
