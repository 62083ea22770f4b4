import { skipSpace } from '../loose-json.js';
import { readArguments, readJsonCalls } from './json-calls.js';
import type { CallFormat, FormatContext, Found, ParsedCall } from './types.js';
import { type CallAt, nearest, readArgPairs, readFunctionBlock } from './xml-calls.js';

const WRAPPERS = [
  { open: '<tool_call>', close: '</tool_call>' },
  { open: '<seed:tool_call>', close: '</seed:tool_call>' },
];
const FUNCTION_OPEN = '<function=';
/** `<tool name="NAME">` (wyrmspire) and `<function name="NAME">` (Hermes 2 Pro variants). */
const NAMED_OPEN = /<(tool|function) name="([\w.-]+)">/y;

/**
 * Calls in XML-ish tags. Inside `<tool_call>` (Hermes, Qwen 2.5/3, Granite 3.1+, xLAM, GLM, Ling)
 * or `<seed:tool_call>` (Seed-OSS) the body is JSON (one call, several, or an array), a
 * Qwen3-Coder `<function=NAME>` block, or GLM's `NAME<arg_key>…` pairs. A `<function=NAME>`
 * block may also come without the wrapper (Qwen3-Coder skips it at times; Functionary never
 * writes it), and the wyrmspire seed wrote `<tool name="NAME">{json}</tool>`.
 */
export const taggedFormat: CallFormat = {
  name: 'tagged',
  explicit: true,
  markers: ['<tool_call>', '<seed:tool_call>', FUNCTION_OPEN, '<tool name=', '<function name='],
  find(text, ctx) {
    const found: Found[] = [];
    let pos = 0;
    for (;;) {
      const start = nearest(text, taggedFormat.markers, pos);
      if (start === -1) return found;
      const wrapper = WRAPPERS.find((w) => text.startsWith(w.open, start));
      const read = wrapper
        ? readWrapped(text, start, wrapper, ctx)
        : text.startsWith(FUNCTION_OPEN, start)
          ? single(readFunctionBlock(text, start, ctx), text, '</tool_call>')
          : readNamedTag(text, start, ctx);
      if (!read) {
        pos = start + 1;
        continue;
      }
      found.push({ start, end: read.end, calls: read.calls });
      pos = read.end;
    }
  },
};

function readWrapped(
  text: string,
  start: number,
  wrapper: { open: string; close: string },
  ctx: FormatContext,
): { calls: ParsedCall[]; end: number } | undefined {
  const bodyAt = skipSpace(text, start + wrapper.open.length);
  const close = text.indexOf(wrapper.close, bodyAt);
  const limit = close === -1 ? text.length : close;
  let read: { calls: ParsedCall[]; end: number } | undefined;
  if (text.startsWith(FUNCTION_OPEN, bodyAt)) read = single(readFunctionBlock(text, bodyAt, ctx), text);
  else if (/[[{`]/.test(text[bodyAt] ?? '')) read = readJsonCalls(text, bodyAt, limit, close !== -1, ctx);
  else read = single(readArgPairs(text, bodyAt, limit, ctx), text);
  if (!read) return undefined;
  return { calls: read.calls, end: closingTag(text, read.end, wrapper.close) };
}

/** `<tool name="NAME">{json}</tool>`: the name in the tag, the arguments as the body. */
function readNamedTag(text: string, start: number, ctx: FormatContext) {
  NAMED_OPEN.lastIndex = start;
  const open = NAMED_OPEN.exec(text);
  if (!open) return undefined;
  const closeTag = `</${open[1]}>`;
  const name = open[2] ?? '';
  const bodyAt = skipSpace(text, NAMED_OPEN.lastIndex);
  if (text[bodyAt] !== '{' && !text.startsWith(closeTag, bodyAt)) return undefined;
  const close = text.indexOf(closeTag, bodyAt);
  const read = readArguments(text, name, bodyAt, close === -1 ? text.length : close, close !== -1, ctx);
  return single(read, text, closeTag);
}

function single(at: CallAt | undefined, text: string, close?: string) {
  if (!at) return undefined;
  return { calls: [at.call], end: close ? closingTag(text, at.end, close) : at.end };
}

/** After the body: stray closing brackets (a common slip) and the closing tag go with the markup. */
function closingTag(text: string, from: number, close: string): number {
  const escaped = close.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const tail = new RegExp(`^[\\s}\\]]*${escaped}`).exec(text.slice(from, from + 64 + close.length));
  return tail ? from + tail[0].length : from;
}
