import { parseLooseJson, scanJson, skipSpace } from '../loose-json.js';
import { cutOffCall, unreadableCall } from './problems.js';
import type { FormatContext, ParsedCall } from './types.js';

/** How a JSON body names its calls. */
export interface JsonCallOptions {
  /** Ambiguous formats: every call must name one of these, or none counts. */
  names?: ReadonlySet<string>;
  /** Apertus writes `{"NAME": {args}}`. */
  nameAsKey?: boolean;
}

const CALL_KEYS = new Set(['name', 'arguments', 'parameters', 'type', 'id', 'tool_call_id', 'call_id']);

/**
 * One call object in the shapes local models write: `{name, arguments}` or `{name, parameters}`
 * (Hermes, Llama, Mistral, Nemotron, Granite), OpenAI's own `{type, function: {name, arguments}}`,
 * Command-R's `{tool_name, parameters}`, and with `nameAsKey` Apertus's `{NAME: {args}}`.
 */
function toCall(value: unknown, options: JsonCallOptions = {}): ParsedCall | undefined {
  if (!isPlainObject(value)) return undefined;
  if (isPlainObject(value.function) && value.name === undefined) return toCall(value.function, options);
  if (typeof value.tool_name === 'string') {
    const { tool_name, ...rest } = value;
    return toCall({ ...rest, name: tool_name }, options);
  }
  const keys = Object.keys(value);
  if (options.nameAsKey && keys.length === 1 && !CALL_KEYS.has(keys[0]!)) {
    const args = normalizeArguments(value[keys[0]!]);
    return args === undefined ? undefined : named(keys[0]!, args, options);
  }
  // Extra keys mean something else, e.g. a tool schema echoed with name, description and parameters.
  if (!keys.every((k) => CALL_KEYS.has(k))) return undefined;
  if (value.type !== undefined && value.type !== 'function') return undefined;
  if (typeof value.name !== 'string' || !value.name.trim()) return undefined;
  const args = normalizeArguments(value.arguments ?? value.parameters);
  return args === undefined ? undefined : named(value.name.trim(), args, options);
}

function named(name: string, args: string, options: JsonCallOptions): ParsedCall | undefined {
  if (options.names && !options.names.has(name)) return undefined;
  return { name, arguments: args };
}

/** Arguments as JSON object text: objects are stringified, strings kept if they hold an object. */
function normalizeArguments(args: unknown): string | undefined {
  if (args === undefined || args === null) return '{}';
  if (isPlainObject(args)) return JSON.stringify(args);
  if (typeof args !== 'string') return undefined;
  if (!args.trim()) return '{}';
  try {
    if (isPlainObject(JSON.parse(args))) return args;
  } catch {
    // repaired below
  }
  const loose = parseLooseJson(args.trim());
  return loose && isPlainObject(loose.value) ? JSON.stringify(loose.value) : undefined;
}

/**
 * The calls of a JSON body inside explicit markup: one object, several in a row, or an array,
 * possibly in a ```json fence. `limit` is where the markup's closing token is (`closed`), where
 * the next call begins, or the end of the text. A value that never closes is repaired when markup
 * ends it (the model closed the call and forgot a bracket); when the text runs out first, the call
 * was cut off, whatever the finish reason says (the rest of its arguments is unknown), and comes
 * back with a problem instead of part of its arguments.
 */
export function readJsonCalls(
  text: string,
  at: number,
  limit: number,
  closed: boolean,
  ctx: FormatContext,
  options: JsonCallOptions = {},
): { calls: ParsedCall[]; end: number } | undefined {
  const ranOut = !closed && limit >= text.length;
  let pos = skipSpace(text, at);
  let fenced = false;
  if (text.startsWith('```', pos)) {
    const nl = text.indexOf('\n', pos);
    if (nl === -1 || nl >= limit) return undefined;
    fenced = true;
    pos = skipSpace(text, nl + 1);
  }
  const calls: ParsedCall[] = [];
  const list = text[pos] === '[' && /^\[\s*[{\]]/.test(text.slice(pos, pos + 64));
  if (list) pos = skipSpace(text, pos + 1);
  while (pos < limit && text[pos] === '{') {
    const whole = scanJson(text, pos);
    if (whole.kind === 'closed') {
      const call = readOne(text.slice(pos, whole.end), options);
      if (!call) break;
      calls.push(call);
      pos = whole.end;
    } else {
      // Prose is not repaired into a call: an ambiguous value must be whole.
      if (options.names) break;
      // Not closed before the text ran out: cut off. Before markup that ends it: a forgotten closer.
      const cut = whole.kind === 'open' && ranOut;
      const segment = text.slice(pos, limit).replace(/[\s`\]]*$/, '');
      const call = cut ? cutOffName(segment, ctx, options) : readOne(segment, options, true);
      if (!call) break;
      calls.push(call);
      pos = limit;
      break;
    }
    while (pos < limit && /[\s,;]/.test(text[pos] ?? '')) pos++;
  }
  if (calls.length === 0) return undefined;
  // A list with something other than calls in it is data, not calls (unless markup says otherwise).
  if (list && options.names && text[pos] !== ']') return undefined;
  if (list && text[pos] === ']') pos++;
  const after = skipSpace(text, pos);
  if (fenced && text.startsWith('```', after)) pos = after + 3;
  return { calls, end: pos };
}

/**
 * The JSON object of arguments for a call the markup already named (`NAME[ARGS]{…}`, DeepSeek,
 * Kimi, harmony, `<function=NAME>{…}`), under the same rules as `readJsonCalls`. An empty body
 * ended by markup is no arguments; a body that is not JSON is reported, not run.
 */
export function readArguments(
  text: string,
  name: string,
  at: number,
  limit: number,
  closed: boolean,
  ctx: FormatContext,
): { call: ParsedCall; end: number } {
  const ranOut = !closed && limit >= text.length;
  let pos = skipSpace(text, at);
  const fence = /^```[\w-]*[^\S\n]*\n/.exec(text.slice(pos, pos + 32));
  if (fence) pos = skipSpace(text, pos + fence[0].length);
  // Nothing before markup that ends the call is no arguments; nothing before the text ends is a cut.
  if (pos >= limit) return { call: ranOut ? cutOffCall(name, ctx) : { name, arguments: '{}' }, end: limit };
  if (text[pos] !== '{') return { call: unreadableCall(name, 'not a JSON object'), end: limit };
  const whole = scanJson(text, pos);
  let call: ParsedCall;
  let end = limit;
  if (whole.kind === 'closed') {
    call = argumentsCall(name, text.slice(pos, whole.end), false);
    end = whole.end;
  } else if (whole.kind === 'open' && ranOut) {
    call = cutOffCall(name, ctx);
  } else {
    call = argumentsCall(name, text.slice(pos, limit).replace(/[\s`]*$/, ''), true);
  }
  if (fence) {
    const after = skipSpace(text, end);
    if (text.startsWith('```', after)) end = after + 3;
  }
  return { call, end };
}

function argumentsCall(name: string, json: string, closeOpen: boolean): ParsedCall {
  const parsed = parseLooseJson(json, closeOpen);
  return parsed && isPlainObject(parsed.value)
    ? { name, arguments: JSON.stringify(parsed.value) }
    : unreadableCall(name, 'not valid JSON');
}

function readOne(json: string, options: JsonCallOptions, closeOpen = false): ParsedCall | undefined {
  const parsed = parseLooseJson(json, closeOpen);
  const call = parsed && toCall(parsed.value, options);
  if (call) return call;
  // Explicit markup: a named call whose arguments are unreadable is reported, not dropped.
  const name = options.names ? undefined : partialName(json, options);
  return name ? unreadableCall(name, 'not valid JSON') : undefined;
}

function cutOffName(json: string, ctx: FormatContext, options: JsonCallOptions): ParsedCall | undefined {
  const name = partialName(json, options);
  return name && !(options.names && !options.names.has(name)) ? cutOffCall(name, ctx) : undefined;
}

/** The tool name of a call object that did not parse, when it can still be read. */
function partialName(json: string, options: JsonCallOptions): string | undefined {
  const match = options.nameAsKey
    ? /^\s*\{\s*"([\w.-]+)"\s*:/.exec(json)
    : /"(?:name|tool_name)"\s*:\s*"([\w.-]+)"/.exec(json);
  return match?.[1];
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
