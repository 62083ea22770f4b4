import { skipSpace } from '../loose-json.js';
import { readArguments, readJsonCalls } from './json-calls.js';
import type { CallFormat, Found, ParsedCall } from './types.js';

const MARK = '[TOOL_CALLS]';
/** `NAME[ARGS]`, the older `NAME[CALL_ID]id[ARGS]`, or v11+ `NAME` right before `{`. */
const NAMED = /\s*([A-Za-z_][\w.-]*)\s*(?:\[CALL_ID\]\s*[\w-]*\s*)?(?:\[ARGS\]\s*|(?=\{))/y;

/**
 * Mistral's `[TOOL_CALLS]`: a JSON array or object (Mistral 7B v0.3, Nemo), or per call
 * `NAME[ARGS]{json}` (Devstral, Mistral Small 3.2, Ministral 3, Magistral) or `NAME{json}`
 * (tokenizer v11+), one marker per call or several calls after one marker.
 */
export const mistralFormat: CallFormat = {
  name: 'mistral',
  explicit: true,
  markers: [MARK],
  find(text, ctx) {
    const found: Found[] = [];
    let mark = text.indexOf(MARK);
    while (mark !== -1) {
      const next = text.indexOf(MARK, mark + MARK.length);
      const limit = next === -1 ? text.length : next;
      const at = skipSpace(text, mark + MARK.length);
      const read =
        text[at] === '[' || text[at] === '{'
          ? readJsonCalls(text, at, limit, false, ctx)
          : readNamed(text, at, limit, ctx);
      if (read) found.push({ start: mark, end: read.end, calls: read.calls });
      mark = next;
    }
    return found;
  },
};

function readNamed(
  text: string,
  at: number,
  limit: number,
  ctx: Parameters<CallFormat['find']>[1],
): { calls: ParsedCall[]; end: number } | undefined {
  const calls: ParsedCall[] = [];
  let end = at;
  for (;;) {
    NAMED.lastIndex = end;
    const head = NAMED.exec(text);
    if (!head || head.index >= limit) break;
    const read = readArguments(text, head[1] ?? '', NAMED.lastIndex, limit, false, ctx);
    calls.push(read.call);
    end = read.end;
  }
  return calls.length > 0 ? { calls, end } : undefined;
}
