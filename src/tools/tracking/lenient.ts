import { z } from 'zod';

/*
 * Small local models often send near-miss arguments: a list as a JSON string, null for an
 * omitted field, "3" for 3, "true" for true. Accepting these costs nothing and saves a round
 * trip that can take minutes on slow hardware; the JSON Schema the model sees is unchanged.
 */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses a string that holds a JSON array or object; anything else is returned untouched. */
export function parseJsonString(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (!(text.startsWith('[') || text.startsWith('{'))) return value;
  try {
    return JSON.parse(text);
  } catch {
    return value;
  }
}

export function numberish(value: unknown): unknown {
  if (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value)) return Number(value);
  return value;
}

export function booleanish(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim().toLowerCase();
  if (text === 'true') return true;
  if (text === 'false') return false;
  return value;
}

/** An optional field that also takes null as "not given". */
export function optional<T extends z.ZodType>(schema: T, prepare: (value: unknown) => unknown = (v) => v) {
  return z.preprocess((value) => (value === null ? undefined : prepare(value)), schema.optional());
}

/** First string among the given keys, for items sent as objects with another field name. */
export function pickText(item: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = item[key];
    if (typeof value === 'string') return value;
  }
  return undefined;
}

export function clip(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/**
 * A trimmed, non-empty string of bounded length. Checked with refinements rather than
 * min/max so the limits stay out of the JSON Schema sent with every request.
 */
export function boundedText(what: string, max: number) {
  return z
    .string()
    .trim()
    .refine((text) => text.length > 0, `${what} must not be empty`)
    .refine((text) => text.length <= max, `${what} is longer than ${max} characters; shorten it`);
}
