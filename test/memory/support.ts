import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import type { LongTermMemory } from '../../src/memory/memory.js';
import { openMemory } from '../../src/memory/open-memory.js';
import type { MemoryStorage } from '../../src/memory/storage.js';
import { type Db, openDatabase } from '../../src/store/sqlite/database.js';
import { sqliteStorage } from '../../src/store/storage.js';
import { postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { memoryAt } from '../support/storage.js';
import { trigramEmbeddingsRoute } from '../support/trigram-embeddings.js';

export type BackendName = 'sqlite' | 'postgres';

/** Which backend a rig keeps memories in; for PostgreSQL, a new empty database per rig. */
export interface Backend {
  name: BackendName;
  /** postgres://... of a new database on this file's private server; undefined for SQLite. */
  newDatabase(): Promise<string | undefined>;
}

export const SQLITE: Backend = { name: 'sqlite', newDatabase: async () => undefined };

/** Vectors per round trip in the rigs' PostgreSQL scans: small, so that a search crosses batches. */
export const TEST_VECTOR_BATCH = 7;

/** Why the PostgreSQL half is skipped, or undefined when it runs. */
export const NO_POSTGRES = postgresBin()
  ? undefined
  : 'PostgreSQL is not installed (apt-get install postgresql; .ci/run installs it)';

/** A title that says when, and why, its tests are skipped. */
export const pgTitle = (title: string): string =>
  NO_POSTGRES ? `${title} (skipped: ${NO_POSTGRES})` : title;

/** Starts a private PostgreSQL server for the enclosing describe; the getter reads it inside tests. */
export function usePostgres(): () => TestPostgres {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });
  return () => server!;
}

/**
 * Runs the same tests against SQLite and against a private PostgreSQL server started for the
 * file. Without PostgreSQL installed, its half is skipped and its title says why.
 */
export function describeBackends(title: string, body: (backend: Backend) => void): void {
  describe(`${title} [sqlite]`, () => body(SQLITE));
  describe.skipIf(NO_POSTGRES !== undefined)(pgTitle(`${title} [postgres]`), () => {
    const server = usePostgres();
    body({ name: 'postgres', newDatabase: () => server().database() });
  });
}

/**
 * A real session database (sessions stay there whichever backend keeps memories), a Hearth home,
 * memory storage of the chosen backend, and a scripted server whose /v1/embeddings is the trigram model.
 */
export interface MemoryRig {
  backend: BackendName;
  dir: string;
  home: string;
  workspace: string;
  dbPath: string;
  db: Db;
  /** The PostgreSQL database memories are kept in, when that is the backend. */
  url: string | undefined;
  server: ScriptedServer;
  embeddingCalls: Array<{ model: string; input: string[] }>;
  /** A new storage over the rig's memories (closed with the rig). */
  storage(options?: { vectors?: 'auto' | 'in-process' }): Promise<MemoryStorage>;
  open(options?: {
    model?: string;
    vectors?: 'auto' | 'in-process';
    server?: boolean;
    budget?: number;
  }): Promise<LongTermMemory>;
  close(): Promise<void>;
}

export async function memoryRig(
  dims: Record<string, number> = {},
  backend: Backend = SQLITE,
): Promise<MemoryRig> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-memory-'));
  const { route, calls } = trigramEmbeddingsRoute(dims);
  const server = await startScriptedServer({
    models: ['chat-model', 'trigram-embed'],
    extraRoutes: { 'POST /v1/embeddings': route },
  });
  const dbPath = join(dir, 'hearth.db');
  const db = openDatabase(dbPath);
  const url = await backend.newDatabase();
  const opened: MemoryStorage[] = [];
  const storage = async (options: { vectors?: 'auto' | 'in-process' } = {}) => {
    const made = url
      ? await memoryAt(url, { vectorBatch: TEST_VECTOR_BATCH })
      : await sqliteStorage(db, dbPath, false).memory(options);
    opened.push(made);
    return made;
  };
  const rig: MemoryRig = {
    backend: backend.name,
    dir,
    home: join(dir, 'home'),
    workspace: join(dir, 'ws'),
    dbPath,
    db,
    url,
    server,
    embeddingCalls: calls,
    storage,
    open: async (options = {}) =>
      openMemory({
        storage: await storage({ vectors: options.vectors }),
        config: configSchema.parse({
          memory: { embedding_model: options.model, budget: options.budget ?? 800 },
          timeout: 30,
        }),
        workspace: rig.workspace,
        home: rig.home,
        server: options.server === false ? undefined : { baseUrl: server.baseUrl },
      }),
    async close() {
      await Promise.all(opened.map((s) => s.close()));
      db.close();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return rig;
}
