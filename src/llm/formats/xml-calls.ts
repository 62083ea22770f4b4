import { skipSpace } from '../loose-json.js';
import { paramSchema, typedArgument } from './arg-types.js';
import { readArguments } from './json-calls.js';
import { cutOffCall } from './problems.js';
import type { CallFormat, FormatContext, Found, ParsedCall } from './types.js';

/** A call and where its markup ends. */
export interface CallAt {
  call: ParsedCall;
  end: number;
}

const FUNCTION_OPEN = '<function=';
const FUNCTION_CLOSE = '</function>';
const PARAM_OPEN = '<parameter=';
const PARAM_CLOSE = '</parameter>';

/** What ends a `<function=NAME>` block's value or body when its own closer is missing. */
const BLOCK_ENDS = [PARAM_CLOSE, PARAM_OPEN, FUNCTION_CLOSE, '</tool_call>', '</seed:tool_call>'];

/**
 * `<function=NAME>` with Qwen3-Coder `<parameter=KEY>value</parameter>` pairs (Qwen3-Coder,
 * Qwen3.5, Nemotron 3, Seed-OSS), or a JSON object of arguments (Functionary v3.1, Llama 3.1's
 * custom format). As in the reference parsers, a value ends at its closing tag, the next
 * parameter or the end of the function; one newline at each end of a value is template padding.
 * A value or a block the text ends inside was cut off, whatever the finish reason says: the call
 * is refused, never run with what arrived.
 */
export function readFunctionBlock(text: string, at: number, ctx: FormatContext): CallAt | undefined {
  const nameEnd = text.indexOf('>', at);
  if (nameEnd === -1) return undefined;
  const name = text.slice(at + FUNCTION_OPEN.length, nameEnd).trim();
  if (!name || /[\s<]/.test(name)) return undefined;
  const bodyAt = skipSpace(text, nameEnd + 1);
  if (text[bodyAt] === '{') {
    const close = text.indexOf(FUNCTION_CLOSE, bodyAt);
    const read = readArguments(text, name, bodyAt, close === -1 ? text.length : close, close !== -1, ctx);
    const after = skipSpace(text, read.end);
    return {
      call: read.call,
      end: text.startsWith(FUNCTION_CLOSE, after) ? after + FUNCTION_CLOSE.length : read.end,
    };
  }
  const args: Record<string, unknown> = {};
  const cut = { call: cutOffCall(name, ctx), end: text.length };
  let pos = nameEnd + 1;
  for (;;) {
    pos = skipSpace(text, pos);
    if (pos >= text.length) return cut;
    if (text.startsWith(FUNCTION_CLOSE, pos)) {
      pos += FUNCTION_CLOSE.length;
      break;
    }
    if (!text.startsWith(PARAM_OPEN, pos)) {
      // A tag the text ends inside was cut; anything else ends the block (the wrapper's closer,
      // the next call, or prose after a forgotten `</function>`).
      if (BLOCK_ENDS.some((t) => t.length > text.length - pos && t.startsWith(text.slice(pos)))) return cut;
      break;
    }
    const keyEnd = text.indexOf('>', pos);
    if (keyEnd === -1) return cut;
    const key = text.slice(pos + PARAM_OPEN.length, keyEnd).trim();
    const valueEnd = nearest(text, BLOCK_ENDS, keyEnd + 1);
    if (valueEnd === -1) return cut;
    if (key)
      args[key] = typedArgument(trimPadding(text.slice(keyEnd + 1, valueEnd)), paramSchema(ctx, name, key));
    pos = text.startsWith(PARAM_CLOSE, valueEnd) ? valueEnd + PARAM_CLOSE.length : valueEnd;
  }
  return { call: { name, arguments: JSON.stringify(args) }, end: pos };
}

/**
 * GLM-4.5/4.6/4.7 and Ling: `NAME` then `<arg_key>K</arg_key><arg_value>V</arg_value>` pairs,
 * up to `limit`, the `</tool_call>` or the end of the text; a call the text ends inside is cut off.
 */
export function readArgPairs(
  text: string,
  at: number,
  limit: number,
  ctx: FormatContext,
): CallAt | undefined {
  const nameEnd = nearest(text, ['<', '\n'], at);
  const name = text.slice(at, nameEnd === -1 || nameEnd > limit ? limit : nameEnd).trim();
  if (!name || /[\s{}[\]"]/.test(name)) return undefined;
  if (limit >= text.length) return { call: cutOffCall(name, ctx), end: text.length };
  const args: Record<string, unknown> = {};
  const pair = /\s*<arg_key>([\s\S]*?)<\/arg_key>\s*<arg_value>/y;
  pair.lastIndex = nameEnd === -1 ? limit : nameEnd;
  for (let m = pair.exec(text); m && m.index < limit; m = pair.exec(text)) {
    const valueAt = pair.lastIndex;
    // A value whose closer is missing ends where the call does.
    const close = text.indexOf('</arg_value>', valueAt);
    const valueEnd = close === -1 || close > limit ? limit : close;
    const key = (m[1] ?? '').trim();
    args[key] = typedArgument(text.slice(valueAt, valueEnd), paramSchema(ctx, name, key));
    pair.lastIndex = valueEnd + '</arg_value>'.length;
  }
  return { call: { name, arguments: JSON.stringify(args) }, end: limit };
}

interface InvokeDialect {
  name: string;
  /** Block openers; the block ends at the matching closer. */
  blocks: ReadonlyArray<{ open: string; close: string }>;
  invoke: RegExp;
  invokeClose: string;
  /** Group 1 the parameter name; group 2, if present, "true" for a raw string. */
  param: RegExp;
  paramClose: string;
}

/** `<invoke name="NAME"><parameter name="KEY">value</parameter></invoke>` inside a block. */
function invokeFormat(dialect: InvokeDialect): CallFormat {
  return {
    name: dialect.name,
    explicit: true,
    markers: dialect.blocks.map((b) => b.open),
    find(text, ctx) {
      const found: Found[] = [];
      for (const block of dialect.blocks) {
        for (
          let start = text.indexOf(block.open);
          start !== -1;
          start = text.indexOf(block.open, start + 1)
        ) {
          const close = text.indexOf(block.close, start);
          const limit = close === -1 ? text.length : close;
          const calls = readInvokes(text, start + block.open.length, limit, ctx, dialect);
          if (calls.length === 0) continue;
          found.push({ start, end: close === -1 ? text.length : close + block.close.length, calls });
        }
      }
      return found;
    },
  };
}

function readInvokes(
  text: string,
  at: number,
  limit: number,
  ctx: FormatContext,
  d: InvokeDialect,
): ParsedCall[] {
  const calls: ParsedCall[] = [];
  const invoke = new RegExp(d.invoke.source, 'g');
  invoke.lastIndex = at;
  for (let m = invoke.exec(text); m && m.index < limit; m = invoke.exec(text)) {
    const name = m[1] ?? '';
    const end = text.indexOf(d.invokeClose, invoke.lastIndex);
    const bodyEnd = end === -1 || end > limit ? limit : end;
    // The text ran out inside the invoke: whatever its parameters, the call was cut off.
    if (bodyEnd >= text.length) {
      calls.push(cutOffCall(name, ctx));
      break;
    }
    const args: Record<string, unknown> = {};
    const param = new RegExp(d.param.source, 'g');
    const following = new RegExp(d.param.source, 'g');
    param.lastIndex = invoke.lastIndex;
    for (let p = param.exec(text); p && p.index < bodyEnd; p = param.exec(text)) {
      const valueAt = param.lastIndex;
      // A value whose closer is missing ends at the next parameter or the end of the invoke.
      following.lastIndex = valueAt;
      const ends = [text.indexOf(d.paramClose, valueAt), following.exec(text)?.index ?? -1, bodyEnd];
      const valueEnd = Math.min(...ends.filter((i) => i >= 0));
      const key = p[1] ?? '';
      const raw = text.slice(valueAt, valueEnd);
      args[key] = p[2] === 'true' ? raw : typedArgument(trimPadding(raw), paramSchema(ctx, name, key));
      param.lastIndex = text.startsWith(d.paramClose, valueEnd) ? valueEnd + d.paramClose.length : valueEnd;
    }
    calls.push({ name, arguments: JSON.stringify(args) });
    if (end === -1) break;
    invoke.lastIndex = end + d.invokeClose.length;
  }
  return calls;
}

export const minimaxFormat = invokeFormat({
  name: 'minimax',
  blocks: [{ open: '<minimax:tool_call>', close: '</minimax:tool_call>' }],
  invoke: /<invoke name="([^"]+)">/,
  invokeClose: '</invoke>',
  param: /<parameter name="([^"]+)">/,
  paramClose: '</parameter>',
});

/** DeepSeek V3.2 (`function_calls`) and V4 (`tool_calls`) DSML; `string="true"` marks raw text. */
export const dsmlFormat = invokeFormat({
  name: 'deepseek-dsml',
  blocks: [
    { open: '<｜DSML｜function_calls>', close: '</｜DSML｜function_calls>' },
    { open: '<｜DSML｜tool_calls>', close: '</｜DSML｜tool_calls>' },
  ],
  invoke: /<｜DSML｜invoke name="([^"]+)">/,
  invokeClose: '</｜DSML｜invoke>',
  param: /<｜DSML｜parameter name="([^"]+)"(?: string="(true|false)")?>/,
  paramClose: '</｜DSML｜parameter>',
});

/** One newline at each end of a value is how the templates lay the tags out. */
function trimPadding(value: string): string {
  return value.replace(/^\r?\n/, '').replace(/\r?\n$/, '');
}

export function nearest(text: string, needles: readonly string[], from: number): number {
  let best = -1;
  for (const needle of needles) {
    const i = text.indexOf(needle, from);
    if (i !== -1 && (best === -1 || i < best)) best = i;
  }
  return best;
}
