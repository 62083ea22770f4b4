/**
 * Stores over a Storage of their own, for tests that open one store of a database as a separate
 * process would: closing the store closes its Storage (and so its pool).
 */

import type { PostgresEventLog } from '../../src/store/postgres/event-log.js';
import type { PostgresMemoryStorage } from '../../src/store/postgres/memory.js';
import { WorkQueue } from '../../src/store/postgres/queue.js';
import {
  type EventLogOptions,
  type MemoryStorageOptions,
  openStorage,
  type PostgresStorage,
} from '../../src/store/storage.js';

async function owning<T extends { close(): Promise<void> }>(
  url: string,
  open: (storage: PostgresStorage) => Promise<T>,
): Promise<T> {
  const storage = (await openStorage({ storage: url })) as PostgresStorage;
  const store = await open(storage).catch(async (err: unknown) => {
    await storage.close();
    throw err;
  });
  const release = store.close.bind(store);
  store.close = async () => {
    await release();
    await storage.close();
  };
  return store;
}

export const queueAt = (url: string): Promise<WorkQueue> => owning(url, (s) => WorkQueue.open(s.pool));
export const eventLogAt = (url: string, options: EventLogOptions): Promise<PostgresEventLog> =>
  owning(url, async (s) => (await s.events(options)) as PostgresEventLog);
export const memoryAt = (url: string, options: MemoryStorageOptions = {}): Promise<PostgresMemoryStorage> =>
  owning(url, async (s) => (await s.memory(options)) as PostgresMemoryStorage);
