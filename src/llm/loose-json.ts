/** JSON as small models write it: found inside prose, with trailing commas or raw newlines. */

/**
 * End (exclusive) of the JSON object or array starting at `at`, found by bracket depth while
 * skipping strings; -1 when it never closes or the brackets don't match.
 */
export function scanJsonValue(text: string, at: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = at; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') stack.push('}');
    else if (c === '[') stack.push(']');
    else if (c === '}' || c === ']') {
      if (stack.pop() !== c) return -1;
      if (stack.length === 0) return i + 1;
    } else if (stack.length === 0) return -1;
  }
  return -1;
}

/**
 * Strict JSON, or JSON with the slips small models make: trailing commas and raw newlines or
 * tabs inside strings; with `closeOpen`, also missing closing brackets at the end (only for text
 * whose end is known from surrounding markup).
 */
export function parseLooseJson(text: string, closeOpen = false): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    try {
      return { value: JSON.parse(repairJson(text, closeOpen)) };
    } catch {
      return undefined;
    }
  }
}

function repairJson(text: string, closeOpen: boolean): string {
  let out = '';
  const stack: string[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (inString) {
      if (c === '\\') {
        out += c + (text[i + 1] ?? '');
        i++;
      } else if (c === '"') {
        inString = false;
        out += c;
      } else out += c < ' ' ? JSON.stringify(c).slice(1, -1) : c;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') stack.push('}');
    else if (c === '[') stack.push(']');
    else if (c === '}' || c === ']') stack.pop();
    else if (c === ',' && /[}\]]/.test(text[skipSpace(text, i + 1)] ?? '')) continue;
    out += c;
  }
  if (!closeOpen) return out;
  if (inString) out += '"';
  return out.replace(/[\s,]+$/, '') + stack.reverse().join('');
}

/** Index of the first non-whitespace character at or after `from`. */
export function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i] ?? '')) i++;
  return i;
}
