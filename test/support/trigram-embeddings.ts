import type { ExtraRoute } from './scripted-server.js';

/**
 * A deterministic embedding model for memory tests: hashed character trigrams (each trigram of
 * each word, hashed with FNV-1a into one of `dims` buckets with a sign). Texts that share words or
 * word parts land close together, unrelated ones nearly orthogonal, like a real model on surface
 * similarity. The model name seeds the hash: another model gives other vectors, as a real change of
 * embedding model would. Served by the scripted server as `POST /v1/embeddings` through its
 * `extraRoutes`, so memory code talks to it over real HTTP.
 */
export function trigramEmbedding(text: string, dims: number, model = ''): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const padded = ` ${word} `;
    for (let i = 0; i + 3 <= padded.length; i++) {
      const h = fnv1a(`${model}|${padded.slice(i, i + 3)}`);
      v[h % dims]! += h & 0x80000000 ? -1 : 1;
    }
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * The `POST /v1/embeddings` route. `dims` gives each model its dimension (default 64); every
 * request is counted in `calls`, with its model and inputs.
 */
export function trigramEmbeddingsRoute(dims: Record<string, number> = {}): {
  route: ExtraRoute;
  calls: Array<{ model: string; input: string[] }>;
} {
  const calls: Array<{ model: string; input: string[] }> = [];
  const route: ExtraRoute = (_req, body) => {
    const { model, input } = body as { model?: string; input?: string | string[] };
    const texts = Array.isArray(input) ? input : [input ?? ''];
    const name = model ?? 'trigram';
    calls.push({ model: name, input: texts });
    const size = dims[name] ?? 64;
    return {
      json: {
        object: 'list',
        model: name,
        data: texts.map((text, index) => ({
          object: 'embedding',
          index,
          embedding: trigramEmbedding(text, size, name),
        })),
        usage: { prompt_tokens: 1, total_tokens: 1 },
      },
    };
  };
  return { route, calls };
}
