import { LiteralError, LiteralReader } from './literal.js';
import { cutOffCall, unreadableCall } from './problems.js';
import type { CallFormat, Found, ParsedCall } from './types.js';

const OPEN = '<|tool_call>';
const CLOSE = '<tool_call|>';

/**
 * Gemma 4: `<|tool_call>call:NAME{key:value,…}<tool_call|>`, keys bare, strings between
 * `<|"|>` quote tokens, numbers, booleans, null, lists and nested dicts as they are.
 */
export const gemmaFormat: CallFormat = {
  name: 'gemma4',
  explicit: true,
  markers: [OPEN],
  find(text, ctx) {
    const found: Found[] = [];
    for (let start = text.indexOf(OPEN); start !== -1; start = text.indexOf(OPEN, start + 1)) {
      const head = /^\s*call:([A-Za-z_][\w.-]*)/.exec(
        text.slice(start + OPEN.length, start + OPEN.length + 200),
      );
      if (!head) continue;
      const name = head[1] ?? '';
      const close = text.indexOf(CLOSE, start);
      const reader = new LiteralReader(text, start + OPEN.length + head[0].length);
      let call: ParsedCall;
      let end = close === -1 ? text.length : close + CLOSE.length;
      try {
        reader.skipSpace();
        const args = reader.peek('{') ? reader.value() : {};
        call = { name, arguments: JSON.stringify(args) };
        if (close === -1) end = reader.pos;
      } catch (err) {
        const cut =
          err instanceof LiteralError && err.cutOff && (close === -1 || ctx.finishReason === 'length');
        call = cut ? cutOffCall(name, ctx) : unreadableCall(name, (err as Error).message);
      }
      found.push({ start, end, calls: [call] });
    }
    return found;
  },
};
