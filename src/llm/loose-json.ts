/**
 * JSON as small models write it. Finding where a value starts and ends inside prose and markup is
 * ours (the formats decide what counts); repairing what was found (single quotes, unquoted keys,
 * True/None, trailing commas, raw newlines in strings, comments) is jsonrepair's. One thing
 * jsonrepair does that we must not let it do unasked: close a value that was cut off. A
 * `write_file` whose content stopped mid-string would otherwise write half a file, so callers
 * learn whether a value was cut (`scanJson`) and only pass `closeOpen` when the markup around it
 * says the model itself ended it.
 */
import { jsonrepair } from 'jsonrepair';

/** How a JSON value starting at some index ends. */
export type JsonExtent =
  /** `end` is exclusive. */
  | { kind: 'closed'; end: number }
  /** The text ran out first; `inString` when it stopped inside a string (the value itself is cut). */
  | { kind: 'open'; inString: boolean }
  /** Mismatched brackets, or not a bracket at all. */
  | { kind: 'invalid' };

/**
 * The extent of the object or array starting at `at`, by bracket depth while skipping strings in
 * double or single quotes.
 */
export function scanJson(text: string, at: number, limit = text.length): JsonExtent {
  const stack: string[] = [];
  let quote = '';
  for (let i = at; i < limit; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || (c === "'" && stack.length > 0)) quote = c;
    else if (c === '{') stack.push('}');
    else if (c === '[') stack.push(']');
    else if (c === '}' || c === ']') {
      if (stack.pop() !== c) return { kind: 'invalid' };
      if (stack.length === 0) return { kind: 'closed', end: i + 1 };
    } else if (stack.length === 0) return { kind: 'invalid' };
  }
  return stack.length > 0 ? { kind: 'open', inString: quote !== '' } : { kind: 'invalid' };
}

/** End (exclusive) of the object or array starting at `at`; -1 when it never closes or is not one. */
export function scanJsonValue(text: string, at: number): number {
  const extent = scanJson(text, at);
  return extent.kind === 'closed' ? extent.end : -1;
}

/**
 * Strict JSON, or JSON with the slips small models make, repaired. Without `closeOpen`, a value
 * whose brackets never close is refused (it was cut off); with it, the missing closers are added,
 * for text whose end the surrounding markup vouches for.
 */
export function parseLooseJson(text: string, closeOpen = false): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    // repaired below
  }
  const start = text.search(/\S/);
  if (start === -1) return undefined;
  if (!closeOpen && (text[start] === '{' || text[start] === '[')) {
    if (scanJson(text, start).kind === 'open') return undefined;
  }
  try {
    return { value: JSON.parse(jsonrepair(text)) };
  } catch {
    return undefined;
  }
}

/** Index of the first non-whitespace character at or after `from`. */
export function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i] ?? '')) i++;
  return i;
}
