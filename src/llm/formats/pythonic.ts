import { skipSpace } from '../loose-json.js';
import { readJsonCalls } from './json-calls.js';
import { LiteralError, LiteralReader } from './literal.js';
import { cutOffCall, unreadableCall } from './problems.js';
import type { CallFormat, FormatContext, Found, ParsedCall } from './types.js';

/**
 * `[get_weather(city="Paris"), add(a=1, b=2.5)]`: calls as a Python list with keyword arguments
 * (Llama 3.2/4, LFM2, vLLM's pythonic parser), or with `bare` one call after another without the
 * brackets, a line each (Olmo 3). With `names`, every call must name one of them. A call whose
 * arguments run past the end of the text was cut off; one with something that is not a literal
 * (a name, an expression, bytes) is reported and the calls after it still count. Arguments that
 * fail to read are read once more with lenient quotes, for same-style quotes nested in a string.
 */
export function readPythonCalls(
  text: string,
  at: number,
  limit: number,
  ctx: FormatContext,
  names?: ReadonlySet<string>,
  bare = false,
): { calls: ParsedCall[]; end: number } | undefined {
  const reader = new LiteralReader(text, skipSpace(text, at), limit);
  if (!bare && !reader.peek('[')) return undefined;
  if (!bare) reader.pos++;
  const close = bare ? '' : ']';
  const calls: ParsedCall[] = [];
  for (;;) {
    reader.skipSpace();
    if (bare ? reader.pos >= limit : reader.peek(close)) {
      reader.pos += close.length;
      break;
    }
    let name = '';
    try {
      name = reader.identifier();
      reader.expect('(');
    } catch {
      // In explicit markup, a name the text ends after is a call cut off.
      if (names || !name || reader.pos < limit) return undefined;
      calls.push(cutOffCall(name, ctx));
      return { calls, end: limit };
    }
    if (names && !names.has(name)) return undefined;
    const read = readKeywordArguments(reader);
    if (!read.ok) {
      if (names) return undefined;
      const cut = read.error instanceof LiteralError && read.error.cutOff;
      calls.push(cut ? cutOffCall(name, ctx) : unreadableCall(name, read.error.message));
      if (cut || !resync(reader, bare)) return { calls, end: limit };
      continue;
    }
    calls.push({ name, arguments: JSON.stringify(read.args) });
    reader.skipSpace();
    if (reader.peek(',')) reader.pos++;
    else if (!bare && !reader.peek(close)) {
      // A list the text ends inside is fine; one followed by other things is not a call list.
      if (names && reader.pos < limit) return undefined;
      break;
    }
  }
  return calls.length > 0 ? { calls, end: reader.pos } : undefined;
}

type ReadArgs = { ok: true; args: Record<string, unknown> } | { ok: false; error: Error };

/**
 * A call's keyword arguments up to its `)`; when a strict reading fails, once more with lenient
 * quotes. On failure the reader stays where the strict reading stopped, and the error reported is
 * the strict one, unless the text ran out (the call was cut off).
 */
function readKeywordArguments(reader: LiteralReader): ReadArgs {
  const at = reader.pos;
  try {
    return { ok: true, args: reader.keywordArguments(')') };
  } catch (strict) {
    const second = new LiteralReader(reader.text, at, reader.limit, { lenientQuotes: true });
    try {
      const args = second.keywordArguments(')');
      reader.pos = second.pos;
      return { ok: true, args };
    } catch (err) {
      const cut = err instanceof LiteralError && err.cutOff;
      return { ok: false, error: (cut ? err : strict) as Error };
    }
  }
}

/** After a call that could not be read, on to the next `), name(` (or the next line's call). */
function resync(reader: LiteralReader, bare: boolean): boolean {
  const separator = bare ? '\\)\\s*[,\\n]\\s*' : '\\)\\s*,\\s*';
  const next = new RegExp(`${separator}(?=[A-Za-z_][\\w.]*\\s*\\()`).exec(
    reader.text.slice(reader.pos, reader.limit),
  );
  if (!next) return false;
  reader.pos += next.index + next[0].length;
  return true;
}

/** A marker, then a Python call list (or JSON, which these models also write when asked). */
function pythonListFormat(name: string, open: string, close: string): CallFormat {
  return {
    name,
    explicit: true,
    markers: [open],
    find(text, ctx) {
      const found: Found[] = [];
      for (let start = text.indexOf(open); start !== -1; start = text.indexOf(open, start + 1)) {
        const bodyAt = skipSpace(text, start + open.length);
        const closeAt = text.indexOf(close, bodyAt);
        const limit = closeAt === -1 ? text.length : closeAt;
        const read = /^\[\s*\{|^\{/.test(text.slice(bodyAt, bodyAt + 16))
          ? readJsonCalls(text, bodyAt, limit, closeAt !== -1, ctx)
          : readPythonCalls(text, bodyAt, limit, ctx);
        if (!read) continue;
        found.push({ start, end: closeAt === -1 ? read.end : closeAt + close.length, calls: read.calls });
      }
      return found;
    },
  };
}

const OLMO_OPEN = '<function_calls>';
const OLMO_CLOSE = '</function_calls>';

/** Olmo 3: `<function_calls>` with one Python call a line, then `</function_calls>`. */
export const olmo3Format: CallFormat = {
  name: 'olmo3',
  explicit: true,
  markers: [OLMO_OPEN],
  find(text, ctx) {
    const found: Found[] = [];
    for (let start = text.indexOf(OLMO_OPEN); start !== -1; start = text.indexOf(OLMO_OPEN, start + 1)) {
      const bodyAt = start + OLMO_OPEN.length;
      const closeAt = text.indexOf(OLMO_CLOSE, bodyAt);
      const limit = closeAt === -1 ? text.length : closeAt;
      const read = readPythonCalls(text, bodyAt, limit, ctx, undefined, true);
      if (!read) continue;
      found.push({ start, end: closeAt === -1 ? read.end : closeAt + OLMO_CLOSE.length, calls: read.calls });
    }
    return found;
  },
};

/** LFM2 and LFM2.5. */
export const lfm2Format = pythonListFormat('lfm2', '<|tool_call_start|>', '<|tool_call_end|>');
/** Llama 4. */
export const llama4Format = pythonListFormat('llama4', '<|python_start|>', '<|python_end|>');

const PYTHON_TAG = '<|python_tag|>';
const BUILTIN_CALL = /^([A-Za-z_]\w*)\.call\(/;

/**
 * Llama 3.1 and 3.2 after `<|python_tag|>`: JSON calls (`{"name", "parameters"}`, several joined
 * by `;`), a built-in tool as `brave_search.call(query="…")`, or bare code for its code
 * interpreter. Built-ins are not Hearth tools: they reach the registry, which names the real ones.
 */
export const pythonTagFormat: CallFormat = {
  name: 'llama-python-tag',
  explicit: true,
  markers: [PYTHON_TAG],
  find(text, ctx) {
    const start = text.indexOf(PYTHON_TAG);
    if (start === -1) return [];
    const bodyAt = skipSpace(text, start + PYTHON_TAG.length);
    const body = text.slice(bodyAt);
    if (body.startsWith('{') || body.startsWith('[')) {
      const read = readJsonCalls(text, bodyAt, text.length, false, ctx);
      return read ? [{ start, end: read.end, calls: read.calls }] : [];
    }
    const builtin = BUILTIN_CALL.exec(body);
    if (builtin) {
      const reader = new LiteralReader(text, bodyAt + builtin[0].length);
      const name = builtin[1] ?? '';
      let call: ParsedCall;
      try {
        call = { name, arguments: JSON.stringify(reader.keywordArguments(')')) };
      } catch (err) {
        call =
          err instanceof LiteralError && err.cutOff
            ? cutOffCall(name, ctx)
            : unreadableCall(name, String(err));
      }
      const end = /^\s*(?:<\|eom_id\|>|<\|eot_id\|>)?/.exec(text.slice(reader.pos))?.[0].length ?? 0;
      return [{ start, end: reader.pos + end, calls: [call] }];
    }
    if (body.trim() === '') return [];
    const code = { name: 'code_interpreter', arguments: JSON.stringify({ code: body.trim() }) };
    return [{ start, end: text.length, calls: [code] }];
  },
};

/**
 * A Python call list that is the whole message, naming only offered tools (vLLM's pythonic), or
 * calls with no list around them, a line each (wyrmspire's `tool_name(arg=...)`): either way every
 * call must name an offered tool, and nothing but calls may be in the message.
 */
export const barePythonFormat: CallFormat = {
  name: 'pythonic',
  explicit: false,
  markers: [],
  find(text, ctx) {
    const at = skipSpace(text, 0);
    const bare = text[at] !== '[';
    if (bare && !/^[A-Za-z_]\w*\(/.test(text.slice(at))) return [];
    const read = readPythonCalls(text, at, text.length, ctx, new Set(ctx.tools.keys()), bare);
    if (!read || skipSpace(text, read.end) !== text.length) return [];
    return [{ start: at, end: read.end, calls: read.calls }];
  },
};
