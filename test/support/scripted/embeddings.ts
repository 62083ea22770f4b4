import { createHash } from 'node:crypto';

/** A deterministic unit vector for `text`: equal texts embed equally, different ones almost never. */
export function embed(text: string, dims = 16): number[] {
  const bytes: number[] = [];
  for (let block = 0; bytes.length < dims * 2; block++) {
    bytes.push(...createHash('sha256').update(`${block}:${text}`).digest());
  }
  const v = Array.from({ length: dims }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!) / 32767.5 - 1);
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

function embeddingInputs(input: unknown): string[] {
  const list = Array.isArray(input) && input.every((x) => typeof x !== 'number') ? input : [input];
  return list.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
}

/** The body of `POST /v1/embeddings`, or undefined when the request has no input. */
export function embeddingsResponse(body: unknown, dims?: number): object | undefined {
  const input = (body as { input?: unknown } | undefined)?.input;
  if (input === undefined) return undefined;
  const inputs = embeddingInputs(input);
  const tokens = Math.max(1, Math.ceil(inputs.join('').length / 4));
  return {
    object: 'list',
    data: inputs.map((s, index) => ({ object: 'embedding', index, embedding: embed(s, dims) })),
    model: (body as { model?: unknown }).model ?? 'scripted-embedding',
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
