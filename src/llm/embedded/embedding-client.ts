/**
 * Embeddings from a GGUF embedding model run in process (`memory.embedding_model: ./x.gguf`), for
 * memory search with no server. The same contract as the HTTP embeddings client: it never throws,
 * a failure is a value and memory falls back to keywords. The model loads on the first call and
 * stays loaded; `model` is the file's path, stored beside every vector it made.
 */
import type { EmbeddingClient, EmbedResult } from '../embeddings.js';
import { type Llama, type LlamaEmbeddingContext, loadModelFile } from './node-llama-cpp.js';

export interface EmbeddedEmbeddingClient extends EmbeddingClient {
  close(): Promise<void>;
}

export function createEmbeddedEmbeddingClient(options: {
  modelPath: string;
  threads?: number;
  cpuOnly?: boolean;
}): EmbeddedEmbeddingClient {
  let loading: Promise<{ llama: Llama; context: LlamaEmbeddingContext } | { error: string }> | undefined;
  const load = async () => {
    const loaded = await loadModelFile(options);
    if ('error' in loaded) return loaded;
    try {
      const context = await loaded.model.createEmbeddingContext({ threads: loaded.threads });
      return { llama: loaded.llama, context };
    } catch (err) {
      await loaded.model.dispose();
      return {
        error: `Cannot make an embedding context for ${options.modelPath}: ${(err as Error).message}`,
      };
    }
  };
  return {
    model: options.modelPath,
    async embed(texts, signal): Promise<EmbedResult> {
      loading ??= load();
      const loaded = await loading;
      if ('error' in loaded) return { ok: false, error: loaded.error };
      const vectors: Float32Array[] = [];
      try {
        // One text at a time: the context evaluates one sequence; a batch is a loop either way.
        for (const text of texts) {
          if (signal?.aborted) return { ok: false, error: 'embedding cancelled' };
          vectors.push(Float32Array.from((await loaded.context.getEmbeddingFor(text)).vector));
        }
      } catch (err) {
        return { ok: false, error: `the embedded embedding model failed: ${(err as Error).message}` };
      }
      return { ok: true, vectors };
    },
    async close() {
      const loaded = loading && (await loading);
      loading = undefined;
      if (loaded && !('error' in loaded)) {
        await loaded.context.dispose();
        await loaded.llama.dispose();
      }
    },
  };
}
