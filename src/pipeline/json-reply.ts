/**
 * JSON out of a small model's reply: reasoning dropped, then the first fenced block that parses,
 * else the first object or array in the prose that parses (repaired by jsonrepair via
 * parseLooseJson), then validated with the caller's zod schema. Failures say what was wrong, in
 * words the model can act on when the request is repeated.
 */
import type { z } from 'zod';
import { parseLooseJson, scanJson } from '../llm/loose-json.js';

export type JsonReply<T> = { ok: true; value: T } | { ok: false; error: string };

const THINK = /<(think|thinking|reasoning)>[\s\S]*?<\/\1>/gi;
const FENCE = /```[a-zA-Z]*\s*\n?([\s\S]*?)```/g;

export function readJsonReply<S extends z.ZodType>(text: string, schema: S): JsonReply<z.infer<S>> {
  const cleaned = text.replace(THINK, '').replace(/^[\s\S]*<\/think>/i, '');
  let lastError = 'the reply holds no JSON object';
  for (const candidate of candidates(cleaned)) {
    const parsed = parseLooseJson(candidate);
    if (!parsed) continue;
    const checked = schema.safeParse(parsed.value);
    if (checked.success) return { ok: true, value: checked.data };
    lastError = checked.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
  }
  return { ok: false, error: lastError };
}

/** Fenced blocks first, then every balanced value in the text, in order. */
function* candidates(text: string): Generator<string> {
  for (const m of text.matchAll(FENCE)) yield m[1] ?? '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== '{' && c !== '[') continue;
    const extent = scanJson(text, i);
    if (extent.kind === 'closed') {
      yield text.slice(i, extent.end);
      i = extent.end - 1;
    }
  }
}
