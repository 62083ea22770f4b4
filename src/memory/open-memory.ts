import type { Config } from '../config/schema.js';
import { isEmbeddedBaseUrl, isModelFile, modelFilePath } from '../llm/embedded/connect.js';
import { createEmbeddingClient, type EmbeddingClient, resolveEmbeddingModel } from '../llm/embeddings.js';
import { LongTermMemory } from './memory.js';
import type { MemoryStorage } from './storage.js';

export interface OpenMemoryOptions {
  /** Where memories are kept (memoryStorage in src/setup/memory-access.ts chooses); closed with the memory. */
  storage: MemoryStorage;
  config: Pick<Config, 'memory' | 'api_key' | 'timeout'>;
  workspace: string;
  home: string;
  /**
   * The model server; unset (no server yet), search is keyword-only. `models`: its model ids, when
   * the caller has them already (the connection's list): the embeddings model is picked there.
   */
  server?: { baseUrl: string; models?: string[] };
}

/**
 * Opens long-term memory over a storage, with the embeddings model from the config, else the one
 * the server lists, else none (search is then keyword-only, and says so).
 */
export async function openMemory(options: OpenMemoryOptions): Promise<LongTermMemory> {
  const { config } = options;
  const embedding = await chooseEmbedder(options);
  return new LongTermMemory({
    storage: options.storage,
    workspace: options.workspace,
    home: options.home,
    embedder: embedding.embedder,
    noEmbedder: embedding.reason,
    budget: config.memory.budget,
  });
}

export async function chooseEmbedder(
  options: Pick<OpenMemoryOptions, 'config' | 'server' | 'workspace'>,
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
  const model = await resolveEmbeddingModel({ ...settings, model: configured, listed: server.models });
  if (!model) {
    return {
      reason: `the server lists no embeddings model (load one, e.g. nomic-embed-text, or set memory.embedding_model)`,
    };
  }
  return { embedder: createEmbeddingClient({ ...settings, model }) };
}
