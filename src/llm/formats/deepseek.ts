import { readArguments } from './json-calls.js';
import type { CallFormat, Found, ParsedCall } from './types.js';

/**
 * The separator is `▁` (U+2581) in the real tokens; models and servers also write `_` or a space,
 * and an ASCII `|` for the full-width `｜`, so the patterns accept all of them, as llama.cpp does.
 */
const BAR = '[｜|]';
const SEP = '[▁_ ]';
const token = (words: string) => `<${BAR}${words.split(' ').join(SEP)}${BAR}>`;
const CALLS_BEGIN = new RegExp(`${token('tool calls begin')}|${token('tool calls')}`, 'g');
/** DeepSeek-R1's short opener, which some builds write with no per-call begin token after it. */
const SHORT_BEGIN = new RegExp(`^${token('tool calls')}$`);
const CALLS_END = new RegExp(token('tool calls end'));
const CALL_BEGIN = new RegExp(token('tool call begin'), 'g');
const CALL_END = new RegExp(token('tool call end'));
const TOOL_SEP = new RegExp(token('tool sep'));

/**
 * DeepSeek V3 and R1 (`<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME` then a ```json fence) and
 * V3.1 (`<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}`), inside `<｜tool▁calls▁begin｜>` …
 * `<｜tool▁calls▁end｜>` or the short `<｜tool▁calls｜>`, one or several calls, prose before them.
 */
export const deepseekFormat: CallFormat = {
  name: 'deepseek',
  explicit: true,
  markers: ['<｜tool▁calls', '<｜tool▁call▁begin｜>', '<|tool_calls_begin|>', '<｜tool_calls'],
  find(text, ctx) {
    const found: Found[] = [];
    CALLS_BEGIN.lastIndex = 0;
    const section = CALLS_BEGIN.exec(text);
    const sectionEnd = section ? CALLS_BEGIN.lastIndex : 0;
    CALL_BEGIN.lastIndex = sectionEnd;
    const first = CALL_BEGIN.exec(text);
    // `<｜tool▁calls｜>function<｜tool▁sep｜>NAME`: the short opener begins the first call itself.
    const shortForm =
      section !== null &&
      SHORT_BEGIN.test(section[0]) &&
      (!first || text.slice(sectionEnd, first.index).trim() !== '');
    if (!first && !shortForm) return found;
    const start = section ? section.index : (first?.index ?? 0);
    const calls: ParsedCall[] = [];
    let end = text.length;
    let bodyAt: number | undefined = shortForm ? sectionEnd : CALL_BEGIN.lastIndex;
    while (bodyAt !== undefined) {
      const next = findFrom(text, CALL_BEGIN, bodyAt);
      const callEnd = findFrom(text, CALL_END, bodyAt);
      const limit = Math.min(...[next, callEnd, text.length].filter((i) => i >= 0));
      const sep = TOOL_SEP.exec(text.slice(bodyAt, limit));
      if (!sep) break;
      const head = text.slice(bodyAt, bodyAt + sep.index).trim();
      let nameAt = bodyAt + sep.index + sep[0].length;
      let name = head;
      if (head === 'function' || head === '') {
        // V3/R1: the name follows the separator, up to the fence.
        const line = /^[^\S\n]*([\w.-]+)/.exec(text.slice(nameAt, limit));
        if (!line) break;
        name = line[1] ?? '';
        nameAt += line[0].length;
      }
      const read = readArguments(text, name, nameAt, limit, callEnd !== -1 && callEnd === limit, ctx);
      calls.push(read.call);
      end =
        callEnd !== -1 && callEnd === limit
          ? limit + (CALL_END.exec(text.slice(limit))?.[0].length ?? 0)
          : read.end;
      CALL_BEGIN.lastIndex = Math.max(end, bodyAt);
      bodyAt = CALL_BEGIN.exec(text) ? CALL_BEGIN.lastIndex : undefined;
    }
    if (calls.length === 0) return found;
    const close = CALLS_END.exec(text.slice(end));
    if (close && text.slice(end, end + close.index).trim() === '') end += close.index + close[0].length;
    found.push({ start, end, calls });
    return found;
  },
};

function findFrom(text: string, pattern: RegExp, from: number): number {
  const match = new RegExp(pattern.source).exec(text.slice(from));
  return match ? from + match.index : -1;
}
