import { listModels, pickEmbeddingModel } from './discover.js';

/**
 * Embeddings from the user's own server (`POST /v1/embeddings`, which LM Studio, Ollama, llama.cpp
 * and vLLM all serve). Like the chat client it never throws once called: a failure is a value, and
 * memory search falls back to keywords on it.
 */
export interface EmbeddingClient {
  /** The model id sent with every request; stored beside each vector it produced. */
  readonly model: string;
  embed(texts: string[], signal?: AbortSignal): Promise<EmbedResult>;
}

export type EmbedResult = { ok: true; vectors: Float32Array[] } | { ok: false; error: string };

export interface EmbeddingSettings {
  baseUrl: string;
  apiKey?: string;
  /** Seconds for one request; embedding a batch on a busy local server can take a while. */
  timeout?: number;
}

/** Inputs per request: servers cap the batch (llama.cpp by its ubatch), and one slow batch is easier to retry. */
export const EMBED_BATCH = 32;

export function createEmbeddingClient(settings: EmbeddingSettings & { model: string }): EmbeddingClient {
  const url = `${settings.baseUrl.replace(/\/+$/, '')}/embeddings`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (settings.apiKey) headers.authorization = `Bearer ${settings.apiKey}`;
  const timeoutMs = (settings.timeout ?? 120) * 1000;

  async function batch(input: string[], signal?: AbortSignal): Promise<EmbedResult> {
    const limit = AbortSignal.timeout(timeoutMs);
    const send = () =>
      fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: settings.model, input }),
        signal: signal ? AbortSignal.any([signal, limit]) : limit,
      });
    let response: Response;
    try {
      // A kept-alive connection the server closed while idle fails at once with a reset; embedding
      // is idempotent, so one more try (on a fresh connection) is safe and spares a keyword-only search.
      response = await send().catch((err) => {
        if (signal?.aborted || limit.aborted) throw err;
        return send();
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      return {
        ok: false,
        error: `the embeddings request to ${url} failed: ${(err as Error).message}${cause ? ` (${cause})` : ''}`,
      };
    }
    const text = await response.text().catch(() => '');
    if (!response.ok) {
      const said = text.replace(/\s+/g, ' ').trim().slice(0, 300);
      return { ok: false, error: `${url} answered HTTP ${response.status}${said ? `: ${said}` : ''}` };
    }
    return parseEmbeddings(text, input.length);
  }

  return {
    model: settings.model,
    async embed(texts, signal) {
      const vectors: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += EMBED_BATCH) {
        const result = await batch(texts.slice(i, i + EMBED_BATCH), signal);
        if (!result.ok) return result;
        vectors.push(...result.vectors);
      }
      return { ok: true, vectors };
    },
  };
}

/** Reads an OpenAI-style embeddings body: `data[i].embedding`, placed by `index` when given. */
function parseEmbeddings(text: string, expected: number): EmbedResult {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, error: `the embeddings answer is not JSON: ${text.slice(0, 120)}` };
  }
  const data = (body as { data?: unknown }).data;
  if (!Array.isArray(data) || data.length !== expected) {
    return {
      ok: false,
      error: `the embeddings answer has ${Array.isArray(data) ? data.length : 'no'} vectors for ${expected} inputs`,
    };
  }
  const vectors: Float32Array[] = new Array(expected);
  let dim: number | undefined;
  for (const [position, item] of data.entries()) {
    const { embedding, index } = item as { embedding?: unknown; index?: unknown };
    if (
      !Array.isArray(embedding) ||
      embedding.length === 0 ||
      !embedding.every((x) => typeof x === 'number')
    ) {
      return { ok: false, error: 'the embeddings answer holds an entry that is not a list of numbers' };
    }
    if (dim !== undefined && embedding.length !== dim) {
      return { ok: false, error: `the embeddings answer mixes dimensions (${dim} and ${embedding.length})` };
    }
    dim = embedding.length;
    const at = typeof index === 'number' && index >= 0 && index < expected ? index : position;
    vectors[at] = normalize(Float32Array.from(embedding as number[]));
  }
  if (vectors.some((v) => v === undefined))
    return { ok: false, error: 'the embeddings answer repeats an index' };
  return { ok: true, vectors };
}

/** Unit length, so that cosine similarity is a dot product everywhere vectors are compared. */
function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}

/**
 * The embedding model to use: the configured one, else the one the server lists (`listed`, when the
 * caller has the list already; the same choice `hearth doctor` reports). Undefined when the server has none: search is then keyword-only.
 */
export async function resolveEmbeddingModel(
  settings: EmbeddingSettings & { model?: string; listed?: string[] },
): Promise<string | undefined> {
  if (settings.model) return settings.model;
  const models =
    settings.listed ?? (await listModels(settings.baseUrl, { apiKey: settings.apiKey }).catch(() => []));
  return pickEmbeddingModel(models);
}
