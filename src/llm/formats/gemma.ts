import { paramSchema, typedArgument } from './arg-types.js';
import { LiteralError, LiteralReader } from './literal.js';
import { cutOffCall, unreadableCall } from './problems.js';
import type { CallFormat, FormatContext, Found, ParsedCall } from './types.js';

interface GemmaDialect {
  name: string;
  open: string;
  close: string;
  /** The token strings are written between. */
  quote: string;
  /**
   * Top-level strings are typed from the tool's schema: FunctionGemma quotes numbers and booleans
   * too (`count:<escape>42<escape>`), as vLLM's parser reads them.
   */
  typed: boolean;
}

/**
 * `OPEN call:NAME{key:value,…} CLOSE`: keys bare, strings between a quote token, numbers,
 * booleans, null, lists and nested dicts as they are. A call the text ends inside is cut off.
 */
function gemmaStyle(d: GemmaDialect): CallFormat {
  return {
    name: d.name,
    explicit: true,
    markers: [d.open],
    find(text, ctx) {
      const found: Found[] = [];
      for (let start = text.indexOf(d.open); start !== -1; start = text.indexOf(d.open, start + 1)) {
        const head = /^\s*call:([A-Za-z_][\w.-]*)/.exec(
          text.slice(start + d.open.length, start + d.open.length + 200),
        );
        if (!head) continue;
        const name = head[1] ?? '';
        const close = text.indexOf(d.close, start);
        const reader = new LiteralReader(text, start + d.open.length + head[0].length, text.length, {
          quoteToken: d.quote,
        });
        let call: ParsedCall;
        let end = close === -1 ? text.length : close + d.close.length;
        try {
          reader.skipSpace();
          // Without `{` the call has no arguments, if markup ends it; else the text ran out.
          if (!reader.peek('{') && close === -1) reader.fail('the call has no arguments yet', true);
          const args = reader.peek('{') ? reader.value() : {};
          call = { name, arguments: JSON.stringify(d.typed ? typed(args, name, ctx) : args) };
          if (close === -1) end = reader.pos;
        } catch (err) {
          const cut = err instanceof LiteralError && err.cutOff && close === -1;
          call = cut ? cutOffCall(name, ctx) : unreadableCall(name, (err as Error).message);
        }
        found.push({ start, end, calls: [call] });
      }
      return found;
    },
  };
}

function typed(args: unknown, tool: string, ctx: FormatContext): unknown {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    out[key] = typeof value === 'string' ? typedArgument(value, paramSchema(ctx, tool, key)) : value;
  }
  return out;
}

/** Gemma 4: `<|tool_call>call:NAME{key:<|"|>str<|"|>,n:1}<tool_call|>`. */
export const gemmaFormat = gemmaStyle({
  name: 'gemma4',
  open: '<|tool_call>',
  close: '<tool_call|>',
  quote: '<|"|>',
  typed: false,
});

/** FunctionGemma (Gemma 3 270M): `<start_function_call>call:NAME{key:<escape>str<escape>}<end_function_call>`. */
export const functionGemmaFormat = gemmaStyle({
  name: 'functiongemma',
  open: '<start_function_call>',
  close: '<end_function_call>',
  quote: '<escape>',
  typed: true,
});
