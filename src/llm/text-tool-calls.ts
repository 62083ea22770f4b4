import { parseLooseJson, scanJsonValue, skipSpace } from './loose-json.js';
export interface ParsedCall {
  name: string;
  /** Always the text of a JSON object. */
  arguments: string;
}

export interface TextToolCallOptions {
  /**
   * Qwen3-Coder XML parameter values are raw text and are converted when they read as JSON
   * (`5`, `true`, `{...}`). Return true for parameters whose schema wants a string, so that
   * file contents such as `{"a": 1}` or `123` stay text.
   */
  rawStringParam?: (toolName: string, paramName: string) => boolean;
}

export interface TextToolCallsResult {
  calls: ParsedCall[];
  /** The text with the call markup removed, trimmed. */
  text: string;
}

/** Calls parsed from markup, and where that markup ends. */
interface CallsAt {
  calls: ParsedCall[];
  end: number;
}

interface Found extends CallsAt {
  start: number;
}

interface Ctx {
  names: ReadonlySet<string>;
  options: TextToolCallOptions;
}

type Finder = (text: string, ctx: Ctx) => Found[];

/**
 * Tool calls written inside assistant text, for servers with no tool-call parser. Returns null
 * when the text holds no call to one of `toolNames`.
 *
 * Formats are tried in order and the first that yields a call wins: `<tool_call>` blocks (Hermes
 * JSON or Qwen3-Coder XML, also a bare `<function=…>`), Mistral `[TOOL_CALLS]`, fenced JSON, and a
 * bare JSON call at the very start or end of the message. Markup whose calls name a tool we don't
 * offer, or that isn't call-shaped, stays in the text: prose and examples are not calls.
 */
export function parseToolCallsFromText(
  text: string,
  toolNames: ReadonlySet<string>,
  options: TextToolCallOptions = {},
): TextToolCallsResult | null {
  if (toolNames.size === 0) return null;
  const ctx: Ctx = { names: toolNames, options };
  const finders: Finder[] = [findTaggedCalls, findMistralCalls, findFencedCalls, findBareCalls];
  for (const find of finders) {
    const found = find(text, ctx);
    if (found.length > 0) {
      return { calls: found.flatMap((f) => f.calls), text: removeSpans(text, found) };
    }
  }
  return null;
}

const TOOL_CALL_OPEN = '<tool_call>';
const TOOL_CALL_CLOSE = '</tool_call>';
const FUNCTION_OPEN = '<function=';

function findTaggedCalls(text: string, ctx: Ctx): Found[] {
  const found: Found[] = [];
  let pos = 0;
  for (;;) {
    const start = nearest(text, [TOOL_CALL_OPEN, FUNCTION_OPEN], pos);
    if (start === -1) return found;
    const wrapped = text.startsWith(TOOL_CALL_OPEN, start);
    const bodyStart = wrapped ? skipSpace(text, start + TOOL_CALL_OPEN.length) : start;
    const body = text.startsWith(FUNCTION_OPEN, bodyStart)
      ? parseXmlFunction(text, bodyStart, ctx)
      : wrapped
        ? parseTaggedJson(text, bodyStart, ctx)
        : undefined;
    if (!body) {
      pos = start + 1;
      continue;
    }
    let end = body.end;
    // Stray closing brackets before `</tool_call>` are a common slip; they go with the markup.
    const tail = /^[\s}\]]*<\/tool_call>/.exec(text.slice(end, end + 64));
    if (tail) end += tail[0].length;
    if (body.calls.length > 0) found.push({ start, end, calls: body.calls });
    pos = end;
  }
}

/** JSON inside `<tool_call>`: may be fenced, and may lack closing brackets before `</tool_call>`. */
function parseTaggedJson(text: string, at: number, ctx: Ctx): CallsAt | undefined {
  let pos = at;
  const fenced = text.startsWith('```', pos);
  if (fenced) {
    const nl = text.indexOf('\n', pos);
    if (nl === -1) return undefined;
    pos = skipSpace(text, nl + 1);
  }
  const run = parseJsonRun(text, pos, ctx);
  if (run) {
    const after = skipSpace(text, run.end);
    if (fenced && text.startsWith('```', after)) run.end = after + 3;
    return run;
  }
  const close = text.indexOf(TOOL_CALL_CLOSE, pos);
  const end = close === -1 ? text.length : close;
  const segment = text.slice(pos, end);
  const value = parseLooseJson(fenced ? segment.replace(/```\s*$/, '') : segment, true);
  const calls = value && toCalls(value.value, ctx.names);
  return calls ? { calls, end } : undefined;
}

const PARAM_OPEN = '<parameter=';
const PARAM_CLOSE = '</parameter>';
const FUNCTION_CLOSE = '</function>';

/** `<function=name><parameter=key>value</parameter>…</function>`; closing tags may be missing. */
function parseXmlFunction(text: string, at: number, ctx: Ctx): CallsAt | undefined {
  const nameEnd = text.indexOf('>', at);
  if (nameEnd === -1) return undefined;
  const name = text.slice(at + FUNCTION_OPEN.length, nameEnd).trim();
  if (!name || /[\s<]/.test(name)) return undefined;
  const args: Record<string, unknown> = {};
  let pos = nameEnd + 1;
  for (;;) {
    pos = skipSpace(text, pos);
    if (text.startsWith(FUNCTION_CLOSE, pos)) {
      pos += FUNCTION_CLOSE.length;
      break;
    }
    if (!text.startsWith(PARAM_OPEN, pos)) break;
    const keyEnd = text.indexOf('>', pos);
    if (keyEnd === -1) break;
    const key = text.slice(pos + PARAM_OPEN.length, keyEnd).trim();
    // As in the reference parser: a value ends at the first closing, next parameter or function end.
    const valueEnd = nearest(text, [PARAM_CLOSE, PARAM_OPEN, FUNCTION_CLOSE, TOOL_CALL_CLOSE], keyEnd + 1);
    const stop = valueEnd === -1 ? text.length : valueEnd;
    if (key) args[key] = xmlValue(text.slice(keyEnd + 1, stop), name, key, ctx.options);
    pos = text.startsWith(PARAM_CLOSE, stop) ? stop + PARAM_CLOSE.length : stop;
  }
  const calls = ctx.names.has(name) ? [{ name, arguments: JSON.stringify(args) }] : [];
  return { calls, end: pos };
}

function xmlValue(raw: string, tool: string, param: string, options: TextToolCallOptions): unknown {
  const value = raw.replace(/^\r?\n/, '').replace(/\r?\n$/, '');
  if (options.rawStringParam?.(tool, param)) return value;
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'string' ? value : parsed;
  } catch {
    return value;
  }
}

const MISTRAL_MARK = '[TOOL_CALLS]';
/** `name[ARGS]` or the older `name[CALL_ID]id[ARGS]`, anchored where the sticky index says. */
const MISTRAL_NAMED = /\s*([\w.-]+)\s*(?:\[CALL_ID\]\s*[\w-]*\s*)?\[ARGS\]\s*/y;

function findMistralCalls(text: string, ctx: Ctx): Found[] {
  const found: Found[] = [];
  let mark = text.indexOf(MISTRAL_MARK);
  while (mark !== -1) {
    const next = text.indexOf(MISTRAL_MARK, mark + MISTRAL_MARK.length);
    const limit = next === -1 ? text.length : next;
    const parsed = parseMistralBody(text, mark + MISTRAL_MARK.length, limit, ctx);
    if (parsed) found.push({ start: mark, end: parsed.end, calls: parsed.calls });
    mark = next;
  }
  return found;
}

function parseMistralBody(text: string, at: number, limit: number, ctx: Ctx): CallsAt | undefined {
  const pos = skipSpace(text, at);
  if (text[pos] === '[' || text[pos] === '{') {
    const run = parseJsonRun(text, pos, ctx);
    if (run) return run;
    const value = parseLooseJson(text.slice(pos, limit), true);
    const calls = value && toCalls(value.value, ctx.names);
    return calls ? { calls, end: limit } : undefined;
  }
  const calls: ParsedCall[] = [];
  let end = at;
  for (;;) {
    MISTRAL_NAMED.lastIndex = end;
    const head = MISTRAL_NAMED.exec(text);
    if (!head || head.index >= limit) break;
    const name = head[1] ?? '';
    const argsAt = MISTRAL_NAMED.lastIndex;
    const argsEnd = scanJsonValue(text, argsAt);
    const value =
      argsEnd !== -1 && argsEnd <= limit
        ? parseLooseJson(text.slice(argsAt, argsEnd))
        : parseLooseJson(text.slice(argsAt, limit), true);
    const args = value && normalizeArguments(value.value);
    if (args === undefined || !ctx.names.has(name)) return undefined;
    calls.push({ name, arguments: args });
    end = argsEnd !== -1 && argsEnd <= limit ? argsEnd : limit;
  }
  return calls.length > 0 ? { calls, end } : undefined;
}

const FENCE = /```[^\n`]*\n([\s\S]*?)(?:```|$)/g;

function findFencedCalls(text: string, ctx: Ctx): Found[] {
  const found: Found[] = [];
  for (const match of text.matchAll(FENCE)) {
    const body = match[1] ?? '';
    const value = parseLooseJson(body.trim(), true);
    const calls = value && toCalls(value.value, ctx.names);
    const run = calls ? undefined : parseJsonRun(body, skipSpace(body, 0), ctx);
    const all = calls ?? (run && skipSpace(body, run.end) === body.length ? run.calls : undefined);
    if (all) found.push({ start: match.index, end: match.index + match[0].length, calls: all });
  }
  return found;
}

const PYTHON_TAG = '<|python_tag|>';
const BARE_SCAN_BUDGET = 2_000_000;
const BRACKETS = ['{', '['];

/**
 * A bare call counts only as (essentially) the whole message: a run of call objects at its very
 * start or very end. JSON in the middle of prose is an example, not a call.
 */
function findBareCalls(text: string, ctx: Ctx): Found[] {
  // Every call object has a "name" key, so a run that reaches the end starts before the last one.
  const lastName = text.lastIndexOf('"name"');
  if (lastName === -1) return [];
  const first = skipSpace(text, 0);
  // Llama 3.1 prefixes a call with <|python_tag|> when the server leaves special tokens in.
  const jsonAt = text.startsWith(PYTHON_TAG, first) ? skipSpace(text, first + PYTHON_TAG.length) : first;
  if (text[jsonAt] === '{' || text[jsonAt] === '[') {
    const run = parseJsonRun(text, jsonAt, ctx);
    if (run) return [{ start: first, end: run.end, calls: run.calls }];
  }
  const last = text.trimEnd().length;
  if (text[last - 1] !== '}' && text[last - 1] !== ']') return [];
  // Unclosed brackets in prose make each try scan to the end; a budget keeps that from going quadratic.
  let budget = BARE_SCAN_BUDGET;
  for (let pos = nearest(text, BRACKETS, 0); pos !== -1 && pos < lastName && budget > 0; ) {
    const valueEnd = scanJsonValue(text, pos);
    budget -= (valueEnd === -1 ? text.length : valueEnd) - pos;
    const run = valueEnd === -1 ? undefined : parseJsonRun(text, pos, ctx);
    if (run && run.end === last) return [{ start: pos, end: run.end, calls: run.calls }];
    // A complete JSON value's insides are not top-level, so they are never the call.
    const skipTo = valueEnd !== -1 && parseLooseJson(text.slice(pos, valueEnd)) ? valueEnd : pos + 1;
    pos = nearest(text, BRACKETS, skipTo);
  }
  return [];
}

/**
 * Consecutive JSON call values from `at`, separated by whitespace, commas or semicolons. Stops
 * before the first value that isn't a call; undefined if the first one isn't.
 */
function parseJsonRun(text: string, at: number, ctx: Ctx): CallsAt | undefined {
  const calls: ParsedCall[] = [];
  let end = -1;
  let pos = at;
  while (text[pos] === '{' || text[pos] === '[') {
    const valueEnd = scanJsonValue(text, pos);
    if (valueEnd === -1) break;
    const value = parseLooseJson(text.slice(pos, valueEnd));
    const more = value && toCalls(value.value, ctx.names);
    if (!more) break;
    calls.push(...more);
    end = valueEnd;
    pos = valueEnd;
    while (pos < text.length && /[\s,;]/.test(text[pos] ?? '')) pos++;
  }
  return calls.length > 0 ? { calls, end } : undefined;
}

const CALL_KEYS = new Set(['name', 'arguments', 'parameters', 'type', 'id']);

/** One call object, or a non-empty array of them; every call must name an offered tool. */
function toCalls(value: unknown, names: ReadonlySet<string>): ParsedCall[] | undefined {
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) return undefined;
  const calls: ParsedCall[] = [];
  for (const item of items) {
    const call = toCall(item);
    if (!call || !names.has(call.name)) return undefined;
    calls.push(call);
  }
  return calls;
}

function toCall(value: unknown): ParsedCall | undefined {
  if (!isPlainObject(value)) return undefined;
  // Extra keys mean something else, e.g. a tool schema echoed with name and parameters.
  if (!Object.keys(value).every((k) => CALL_KEYS.has(k))) return undefined;
  if (value.type !== undefined && value.type !== 'function') return undefined;
  if (typeof value.name !== 'string' || !value.name.trim()) return undefined;
  const args = normalizeArguments(value.arguments ?? value.parameters);
  return args === undefined ? undefined : { name: value.name.trim(), arguments: args };
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
    // fall through to the tolerant parse
  }
  const loose = parseLooseJson(args.trim());
  return loose && isPlainObject(loose.value) ? JSON.stringify(loose.value) : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nearest(text: string, needles: readonly string[], from: number): number {
  let best = -1;
  for (const needle of needles) {
    const i = text.indexOf(needle, from);
    if (i !== -1 && (best === -1 || i < best)) best = i;
  }
  return best;
}

/** Cut the call markup out; the prose around each call is kept, a blank line between the parts. */
function removeSpans(text: string, spans: readonly Found[]): string {
  const parts: string[] = [];
  let pos = 0;
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    parts.push(text.slice(pos, span.start).trim());
    pos = Math.max(pos, span.end);
  }
  parts.push(text.slice(pos).trim());
  // A call the model wrapped in a fence leaves the fence's two halves on either side of the cut.
  for (let i = 0; i + 1 < parts.length; i++) {
    const before = parts[i] ?? '';
    const after = parts[i + 1] ?? '';
    const open = /(^|\n)```[^\n`]*$/.exec(before);
    if (open && after.startsWith('```')) {
      parts[i] = before.slice(0, open.index).trim();
      parts[i + 1] = after.slice(3).trim();
    }
  }
  return parts.filter((p) => p.length > 0).join('\n\n');
}
