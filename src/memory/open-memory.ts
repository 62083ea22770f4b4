import type { Config } from '../config/schema.js';
import { isEmbeddedBaseUrl, isModelFile, modelFilePath } from '../llm/embedded/connect.js';
import { createEmbeddingClient, type EmbeddingClient, resolveEmbeddingModel } from '../llm/embeddings.js';
import type { Db } from '../store/database.js';
import { LongTermMemory } from './memory.js';
import { SqliteVecIndex } from './sqlite-vec-index.js';
import { InProcessVectorIndex, type VectorIndex } from './vector-index.js';

export interface OpenMemoryOptions {
  db: Db;
  config: Pick<Config, 'memory' | 'api_key' | 'timeout'>;
  workspace: string;
  home: string;
  /** The model server; unset (no server yet), search is keyword-only. */
  server?: { baseUrl: string };
  /** 'in-process' skips sqlite-vec (the benchmark compares both). */
  vectors?: 'auto' | 'in-process';
}

/**
 * Opens long-term memory over the session database: sqlite-vec when it loads, else vectors in
 * process; the embeddings model from the config, else the one the server lists, else none.
 */
export async function openMemory(options: OpenMemoryOptions): Promise<LongTermMemory> {
  const { db, config } = options;
  const [vectors, embedding] = await Promise.all([
    chooseVectorIndex(db, options.vectors ?? 'auto'),
    chooseEmbedder(options),
  ]);
  return new LongTermMemory({
    db,
    workspace: options.workspace,
    home: options.home,
    vectors,
    embedder: embedding.embedder,
    noEmbedder: embedding.reason,
    budget: config.memory.budget,
  });
}

export async function chooseVectorIndex(db: Db, choice: 'auto' | 'in-process'): Promise<VectorIndex> {
  if (choice === 'auto') {
    const loaded = await SqliteVecIndex.load(db);
    if (loaded.index) return loaded.index;
  }
  return new InProcessVectorIndex(db);
}

async function chooseEmbedder(
  options: OpenMemoryOptions,
): Promise<{ embedder?: EmbeddingClient; reason?: string }> {
  const { config, server } = options;
  const configured = config.memory.embedding_model;
  if (isModelFile(configured)) {
    // A GGUF embedding model runs in process, with or without a server for chat. Imported here so
    // that memory without one never loads the embedded code.
    const { createEmbeddedEmbeddingClient } = await import('../llm/embedded/embedding-client.js');
    return {
      embedder: createEmbeddedEmbeddingClient({ modelPath: modelFilePath(configured, options.workspace) }),
    };
  }
  if (!server) return { reason: 'no model server connected' };
  if (isEmbeddedBaseUrl(server.baseUrl))
    return {
      reason:
        'the model runs in process, with no server to embed; set memory.embedding_model to a .gguf embedding model (hearth models pull nomic-embed-text-v1.5)',
    };
  const settings = { baseUrl: server.baseUrl, apiKey: config.api_key, timeout: config.timeout };
  const model = await resolveEmbeddingModel({ ...settings, model: configured });
  if (!model) {
    return {
      reason: `the server lists no embeddings model (load one, e.g. nomic-embed-text, or set memory.embedding_model)`,
    };
  }
  return { embedder: createEmbeddingClient({ ...settings, model }) };
}
