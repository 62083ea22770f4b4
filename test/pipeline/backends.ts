/**
 * The pipeline's storage on either backend, for tests that run against both (`describeBackends`,
 * shared with memory's tests): a new SQLite file or a new PostgreSQL database per rig, opened
 * through `openPipelineStorage` as the CLI opens it, as often as a test wants connections.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { type PipelineStorage, pipelineStorage } from '../../src/pipeline/storage.js';
import { openStorage } from '../../src/store/storage.js';
import type { Clock } from '../../src/util/clock.js';
import type { Backend } from '../memory/support.js';

export { type Backend, describeBackends } from '../memory/support.js';

export interface StoreRig {
  /** postgres://... of the rig's database; undefined for SQLite. */
  url: string | undefined;
  /** A new connection to the rig's store, as another process would open it. */
  open(options?: { clock?: Clock; leaseSeconds?: number }): Promise<PipelineStorage>;
}

/** Per test: rigs on `backend`, closed and removed after the test. */
export function useStoreRigs(backend: Backend): () => Promise<StoreRig> {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return async () => {
    const url = await backend.newDatabase();
    const dir = mkdtempSync(join(tmpdir(), 'hearth-plan-store-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return {
      url,
      async open(options = {}) {
        const config = { storage: url, db_path: join(dir, 'hearth.db') };
        const shared = await openStorage(config);
        const storage = await pipelineStorage(
          shared,
          { pipeline: { lease: options.leaseSeconds ?? 60 } },
          options.clock ? { clock: options.clock } : {},
        );
        cleanups.push(async () => {
          await storage.close();
          await shared.close();
        });
        return storage;
      },
    };
  };
}
