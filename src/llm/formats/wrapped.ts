import { skipSpace } from '../loose-json.js';
import { type JsonCallOptions, readJsonCalls } from './json-calls.js';
import type { CallFormat, Found } from './types.js';

interface Wrapper {
  name: string;
  open: string;
  /** Absent: the JSON itself ends the markup. */
  close?: string;
  /** Where the body starts, counted from the marker's start (default: after the marker). */
  bodyOffset?: number;
  options?: JsonCallOptions;
}

/** A marker, a JSON call (or several, or an array), and maybe a closing marker. */
function wrappedJson(w: Wrapper): CallFormat {
  return {
    name: w.name,
    explicit: true,
    markers: [w.open],
    find(text, ctx) {
      const found: Found[] = [];
      let pos = 0;
      for (let start = text.indexOf(w.open, pos); start !== -1; start = text.indexOf(w.open, pos)) {
        const bodyAt = skipSpace(text, start + (w.bodyOffset ?? w.open.length));
        const next = text.indexOf(w.open, bodyAt);
        const close = w.close ? text.indexOf(w.close, bodyAt) : -1;
        const limit = close !== -1 ? close : next !== -1 ? next : text.length;
        const read = readJsonCalls(text, bodyAt, limit, close !== -1, ctx, w.options);
        if (!read) {
          pos = start + 1;
          continue;
        }
        let end = read.end;
        if (w.close) {
          const after = text.slice(end).match(/^[\s}\]]*/)?.[0].length ?? 0;
          if (text.startsWith(w.close, end + after)) end += after + w.close.length;
        }
        found.push({ start, end, calls: read.calls });
        pos = end;
      }
      return found;
    },
  };
}

/** Granite 3.0: `<|tool_call|>[{…}]`. */
export const graniteFormat = wrappedJson({ name: 'granite', open: '<|tool_call|>' });
/** FireFunction v2 and Phi-4-mini: ` functools[{…}]`. */
export const functoolsFormat = wrappedJson({ name: 'functools', open: 'functools[', bodyOffset: 9 });
/** Nemotron Nano v2: `<TOOLCALL>[{…}]</TOOLCALL>`. */
export const nemotronFormat = wrappedJson({ name: 'nemotron', open: '<TOOLCALL>', close: '</TOOLCALL>' });
/** Command-R7B: `<|START_ACTION|>[{"tool_call_id", "tool_name", "parameters"}]<|END_ACTION|>`. */
export const commandRFormat = wrappedJson({
  name: 'command-r7b',
  open: '<|START_ACTION|>',
  close: '<|END_ACTION|>',
});
/** Apertus: `<|tools_prefix|>[{"NAME": {args}}]<|tools_suffix|>`. */
export const apertusFormat = wrappedJson({
  name: 'apertus',
  open: '<|tools_prefix|>',
  close: '<|tools_suffix|>',
  options: { nameAsKey: true },
});
/** Apriel: `<tool_calls>[{…}]</tool_calls>`. */
export const aprielFormat = wrappedJson({ name: 'apriel', open: '<tool_calls>', close: '</tool_calls>' });
/** LM Studio's own prompt format for models without a tool template: `[TOOL_REQUEST]{…}[END_TOOL_REQUEST]`. */
export const lmStudioFormat = wrappedJson({
  name: 'lmstudio',
  open: '[TOOL_REQUEST]',
  close: '[END_TOOL_REQUEST]',
});
