import { scanJson, skipSpace } from '../loose-json.js';
import { readJsonCalls } from './json-calls.js';
import type { CallFormat, FormatContext, Found } from './types.js';

const FENCE = /```[^\n`]*\n([\s\S]*?)(?:```|$)/g;
/** Command-R+ announces a fenced call with `Action:` on the line before. */
const ACTION = /(?:^|\n)[^\S\n]*Action:\s*$/;
const BARE_SCAN_BUDGET = 2_000_000;

function offered(ctx: FormatContext): ReadonlySet<string> {
  return new Set(ctx.tools.keys());
}

/** JSON calls filling a ``` fence (xLAM, Command-R+, many instruct models without a template). */
export const fencedFormat: CallFormat = {
  name: 'fenced-json',
  explicit: false,
  markers: [],
  find(text, ctx) {
    const found: Found[] = [];
    const names = offered(ctx);
    for (const match of text.matchAll(FENCE)) {
      const body = match[1] ?? '';
      const read = readJsonCalls(body, 0, body.length, true, ctx, { names });
      if (!read || skipSpace(body, read.end) !== body.length) continue;
      const action = ACTION.exec(text.slice(0, match.index));
      found.push({
        start: action ? action.index : match.index,
        end: match.index + match[0].length,
        calls: read.calls,
      });
    }
    return found;
  },
};

/**
 * Bare JSON calls (Llama 3.x JSON, xLAM arrays, models answering with only the call): a run of
 * call objects at the very start or the very end of the message. JSON in the middle of prose is
 * an example, not a call.
 */
export const bareJsonFormat: CallFormat = {
  name: 'bare-json',
  explicit: false,
  markers: [],
  find(text, ctx) {
    // Every call object has a "name" key, so a run that reaches the end starts before the last one.
    const lastName = Math.max(text.lastIndexOf('"name"'), text.lastIndexOf('"tool_name"'));
    if (lastName === -1) return [];
    const names = offered(ctx);
    const first = skipSpace(text, 0);
    if (text[first] === '{' || text[first] === '[') {
      const read = readJsonCalls(text, first, text.length, false, ctx, { names });
      if (read) return [{ start: first, end: read.end, calls: read.calls }];
    }
    const last = text.trimEnd().length;
    if (text[last - 1] !== '}' && text[last - 1] !== ']') return [];
    // Unclosed brackets in prose make each try scan to the end; a budget keeps that from going quadratic.
    let budget = BARE_SCAN_BUDGET;
    for (let pos = nextBracket(text, 0); pos !== -1 && pos < lastName && budget > 0; ) {
      const extent = scanJson(text, pos);
      budget -= (extent.kind === 'closed' ? extent.end : text.length) - pos;
      if (extent.kind === 'closed') {
        const read = readJsonCalls(text, pos, text.length, false, ctx, { names });
        if (read && skipSpace(text, read.end) === text.length)
          return [{ start: pos, end: read.end, calls: read.calls }];
      }
      // A complete JSON value's insides are not top-level, so they are never the call.
      pos = nextBracket(text, extent.kind === 'closed' ? extent.end : pos + 1);
    }
    return [];
  },
};

function nextBracket(text: string, from: number): number {
  const brace = text.indexOf('{', from);
  const bracket = text.indexOf('[', from);
  if (brace === -1) return bracket;
  if (bracket === -1) return brace;
  return Math.min(brace, bracket);
}
