import { readArguments } from './json-calls.js';
import type { CallFormat, Found } from './types.js';

const SECTION_BEGIN = '<|tool_calls_section_begin|>';
const SECTION_END = '<|tool_calls_section_end|>';
const CALL_BEGIN = '<|tool_call_begin|>';
const ARGS_BEGIN = '<|tool_call_argument_begin|>';
const CALL_END = '<|tool_call_end|>';
/** `functions.NAME:INDEX`; some builds drop the `functions.` prefix or the index. */
const CALL_ID = /^\s*(?:functions\.)?([\w.-]+?)(?::\d+)?\s*$/;

/**
 * Kimi-K2: `<|tool_calls_section_begin|>` then per call `<|tool_call_begin|>functions.NAME:0
 * <|tool_call_argument_begin|>{json}<|tool_call_end|>`. Kimi-K2-Thinking also writes calls
 * inside an unclosed think, with or without the section and end tokens.
 */
export const kimiFormat: CallFormat = {
  name: 'kimi',
  explicit: true,
  markers: [SECTION_BEGIN, CALL_BEGIN],
  find(text, ctx) {
    const found: Found[] = [];
    let pos = 0;
    for (;;) {
      const section = text.indexOf(SECTION_BEGIN, pos);
      const first = text.indexOf(CALL_BEGIN, pos);
      if (first === -1) return found;
      const start = section !== -1 && section < first ? section : first;
      const calls = [];
      let end = first;
      for (let begin = first; begin !== -1 && text.startsWith(CALL_BEGIN, begin); ) {
        const argsAt = text.indexOf(ARGS_BEGIN, begin);
        const nextBegin = text.indexOf(CALL_BEGIN, begin + CALL_BEGIN.length);
        if (argsAt === -1 || (nextBegin !== -1 && argsAt > nextBegin)) break;
        const id = CALL_ID.exec(text.slice(begin + CALL_BEGIN.length, argsAt));
        if (!id) break;
        const close = text.indexOf(CALL_END, argsAt);
        const limits = [close, nextBegin, text.indexOf(SECTION_END, argsAt), text.length].filter(
          (i) => i >= 0,
        );
        const limit = Math.min(...limits);
        const read = readArguments(
          text,
          id[1] ?? '',
          argsAt + ARGS_BEGIN.length,
          limit,
          limit === close,
          ctx,
        );
        calls.push(read.call);
        end = limit === close ? close + CALL_END.length : Math.max(read.end, limit);
        begin = skipTo(text, end, CALL_BEGIN);
      }
      if (calls.length === 0) {
        pos = first + 1;
        continue;
      }
      const sectionEnd = skipTo(text, end, SECTION_END);
      if (sectionEnd !== -1) end = sectionEnd + SECTION_END.length;
      found.push({ start, end, calls });
      pos = end;
    }
  },
};

/** Where `token` is, if only whitespace stands between `from` and it. */
function skipTo(text: string, from: number, token: string): number {
  const at = text.indexOf(token, from);
  return at !== -1 && text.slice(from, at).trim() === '' ? at : -1;
}
