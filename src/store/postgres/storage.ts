/**
 * The PostgreSQL backend of the one Storage (src/store/storage.ts): one pool for the whole process,
 * migrated once, and every store over it. Loaded only when a URL is configured.
 */
import { DEFAULT_PLAN_LEASE_MS, type OpenStorageOptions, type PostgresStorage } from '../storage.js';
import { openPostgres } from './connection.js';
import { PostgresSessionStorage } from './sessions.js';

export async function openPostgresStorage(
  url: string,
  options: OpenStorageOptions = {},
): Promise<PostgresStorage> {
  const pool = await openPostgres(url, { max: options.poolSize, role: options.role });
  const sessions = new PostgresSessionStorage(pool, url, true, options.holder);
  let closed: Promise<void> | undefined;
  return {
    kind: 'postgres',
    pool,
    url,
    sessions,
    async queue() {
      const { WorkQueue } = await import('./queue.js');
      return WorkQueue.open(pool);
    },
    async events(logOptions) {
      const { PostgresEventLog } = await import('./event-log.js');
      return new PostgresEventLog(pool, url, logOptions);
    },
    async scheduler(schedulerOptions) {
      const { PostgresSchedulerStorage } = await import('./scheduler.js');
      return new PostgresSchedulerStorage(pool, schedulerOptions);
    },
    async memory(memoryOptions = {}) {
      const { PostgresMemoryStorage } = await import('./memory.js');
      return new PostgresMemoryStorage(pool, memoryOptions);
    },
    async plans(planOptions = {}) {
      const [{ PostgresPlanStore }, { PostgresJournal }] = await Promise.all([
        import('./plans.js'),
        import('./journal.js'),
      ]);
      const now = planOptions.clock ? () => planOptions.clock!.now() : undefined;
      return {
        plans: new PostgresPlanStore(pool, planOptions.leaseMs ?? DEFAULT_PLAN_LEASE_MS, now),
        journal: new PostgresJournal(pool, planOptions.clock),
        close: async () => {},
      };
    },
    async evals() {
      const { PostgresEvalResults } = await import('./eval-results.js');
      return new PostgresEvalResults(pool);
    },
    close: () => {
      // The sessions own the pool: closing them ends it.
      closed ??= sessions.close();
      return closed;
    },
  };
}
