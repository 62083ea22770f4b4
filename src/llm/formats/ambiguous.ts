import { parseLooseJson, scanJson, skipSpace } from '../loose-json.js';
import { isPlainObject, readJsonCalls } from './json-calls.js';
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

/** Tags Hermes-style models wrap a JSON call in instead of `<tool_call>` (llama.cpp's Hermes 2 Pro parser takes them). */
export const WRAPPER_TAGS = ['tool', 'tools', 'response', 'json', 'JSON', 'xml', 'function_call'];
const WRAPPER = new RegExp(`<(${WRAPPER_TAGS.join('|')})>`, 'g');

/**
 * JSON calls inside one of those tags, maybe inside a fence: "```xml\n<response>\n{…}\n</response>\n```".
 * The tags are words prose uses too, so only calls naming offered tools count, and nothing else
 * may stand inside the tag.
 */
export const wrappedJsonFormat: CallFormat = {
  name: 'wrapped-json',
  explicit: false,
  markers: [],
  find(text, ctx) {
    const found: Found[] = [];
    const names = offered(ctx);
    for (const match of text.matchAll(WRAPPER)) {
      const closeTag = `</${match[1]}>`;
      const bodyAt = match.index + match[0].length;
      const close = text.indexOf(closeTag, bodyAt);
      if (close === -1) continue;
      const read = readJsonCalls(text, bodyAt, close, true, ctx, { names });
      if (!read || skipSpace(text, read.end) !== close) continue;
      let start = match.index;
      let end = close + closeTag.length;
      // A fence holding just the wrapper goes with it.
      const before = /```[^\n`]*\n\s*$/.exec(text.slice(Math.max(0, start - 64), start));
      const after = /^\s*```/.exec(text.slice(end));
      if (before && after) {
        start -= before[0].length;
        end += after[0].length;
      }
      found.push({ start, end, calls: read.calls });
    }
    return found;
  },
};

/**
 * Bare JSON calls (Llama 3.x JSON, xLAM arrays, models answering with only the call): a run of
 * call objects at the very start or the very end of the message. JSON in the middle of prose is
 * an example, not a call, except Llama 3's own call shape (`{"name", "parameters"}`), which its
 * models write between sentences (vLLM's llama3_json parser takes it there too).
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
    const endsInJson = text[last - 1] === '}' || text[last - 1] === ']';
    if (!endsInJson && !text.includes('"parameters"')) return [];
    // Unclosed brackets in prose make each try scan to the end; a budget keeps that from going quadratic.
    let budget = BARE_SCAN_BUDGET;
    for (let pos = nextBracket(text, 0); pos !== -1 && pos < lastName && budget > 0; ) {
      const extent = scanJson(text, pos);
      budget -= (extent.kind === 'closed' ? extent.end : text.length) - pos;
      if (extent.kind === 'closed') {
        const read = readJsonCalls(text, pos, text.length, false, ctx, { names });
        const counts =
          read &&
          ((endsInJson && skipSpace(text, read.end) === text.length) ||
            llamaCall(text.slice(pos, extent.end)));
        if (read && counts) return [{ start: pos, end: read.end, calls: read.calls }];
      }
      // A complete JSON value's insides are not top-level, so they are never the call.
      pos = nextBracket(text, extent.kind === 'closed' ? extent.end : pos + 1);
    }
    return [];
  },
};

/** `{"name": …, "parameters": {…}}`, the shape Llama 3's JSON tool calling writes. */
function llamaCall(json: string): boolean {
  const parsed = parseLooseJson(json);
  const value = parsed?.value as Record<string, unknown> | undefined;
  return isPlainObject(value) && 'parameters' in value && !('arguments' in value);
}

function nextBracket(text: string, from: number): number {
  const brace = text.indexOf('{', from);
  const bracket = text.indexOf('[', from);
  if (brace === -1) return bracket;
  if (bracket === -1) return brace;
  return Math.min(brace, bracket);
}
