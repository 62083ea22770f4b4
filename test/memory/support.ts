import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configSchema } from '../../src/config/schema.js';
import type { LongTermMemory } from '../../src/memory/memory.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { type Db, openDatabase } from '../../src/store/database.js';
import { type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { trigramEmbeddingsRoute } from '../support/trigram-embeddings.js';

/** A real database file, a Hearth home and a scripted server whose /v1/embeddings is the trigram model. */
export interface MemoryRig {
  dir: string;
  home: string;
  workspace: string;
  dbPath: string;
  db: Db;
  server: ScriptedServer;
  embeddingCalls: Array<{ model: string; input: string[] }>;
  open(options?: {
    model?: string;
    vectors?: 'auto' | 'in-process';
    server?: boolean;
    budget?: number;
  }): Promise<LongTermMemory>;
  close(): Promise<void>;
}

export async function memoryRig(dims: Record<string, number> = {}): Promise<MemoryRig> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-memory-'));
  const { route, calls } = trigramEmbeddingsRoute(dims);
  const server = await startScriptedServer({
    models: ['chat-model', 'trigram-embed'],
    extraRoutes: { 'POST /v1/embeddings': route },
  });
  const dbPath = join(dir, 'hearth.db');
  const rig: MemoryRig = {
    dir,
    home: join(dir, 'home'),
    workspace: join(dir, 'ws'),
    dbPath,
    db: openDatabase(dbPath),
    server,
    embeddingCalls: calls,
    open: (options = {}) =>
      openMemory({
        db: rig.db,
        config: configSchema.parse({
          memory: { embedding_model: options.model, budget: options.budget ?? 800 },
          timeout: 30,
        }),
        workspace: rig.workspace,
        home: rig.home,
        server: options.server === false ? undefined : { baseUrl: server.baseUrl },
        vectors: options.vectors,
      }),
    async close() {
      rig.db.close();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return rig;
}
