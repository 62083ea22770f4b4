/**
 * Where the pipeline keeps its plans, tasks, log, journal and pause flags: the process's Storage
 * hands them out (`storage.plans()`, src/store/storage.ts), in the SQLite file or the shared
 * PostgreSQL database.
 */
import type { Config } from '../config/schema.js';
import type { PlanStorageOptions, Storage } from '../store/storage.js';
import type { Clock } from '../util/clock.js';
import type { PipelineJournal } from './journal.js';
import type { PlanStore } from './plan-store.js';

export interface PipelineStorage {
  plans: PlanStore;
  journal: PipelineJournal;
  /** Releases what was taken for it; the connection stays the Storage's. */
  close(): Promise<void>;
}

/** The lease when the config does not say (`pipeline.lease`, seconds). */
const DEFAULT_LEASE_SECONDS = 60;

/** The pipeline's stores in `storage`, with the claim lease the config sets. */
export function pipelineStorage(
  storage: Storage,
  config: { pipeline?: Pick<Config['pipeline'], 'lease'> },
  options: { clock?: Clock } = {},
): Promise<PipelineStorage> {
  const planOptions: PlanStorageOptions = {
    leaseMs: (config.pipeline?.lease ?? DEFAULT_LEASE_SECONDS) * 1000,
    ...(options.clock ? { clock: options.clock } : {}),
  };
  return storage.plans(planOptions);
}
