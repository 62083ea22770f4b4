import { readArguments } from './json-calls.js';
import { unreadableCall } from './problems.js';
import type { CallFormat, Found } from './types.js';

/**
 * gpt-oss harmony. A message is `<|start|>ROLE[ to=RECIPIENT]<|channel|>CHANNEL[ to=RECIPIENT]
 * [<|constrain|>TYPE]<|message|>BODY` ended by `<|end|>`, `<|return|>` or `<|call|>` (servers
 * strip the last one as a stop token). The channel splitter reads the headers: `analysis` is
 * reasoning, `final` and `commentary` are text, and a message with a recipient is a call, passed
 * on in the one shape `CALL_HEADER` below so that this finder reads every variant the same way.
 */
export const HEADER_STARTS = ['<|start|>', '<|channel|>'] as const;
export const MESSAGE = '<|message|>';
export const SEGMENT_ENDS = ['<|end|>', '<|return|>', '<|call|>'] as const;
export const CALL_END = '<|call|>';
const CALL_HEADER = '<|start|>assistant to=';

export type HarmonyKind = 'reasoning' | 'text' | 'call';

/** What a header says the message that follows is. */
export function readHeader(header: string): { kind: HarmonyKind; recipient?: string } {
  const recipient = [...header.matchAll(/\bto=([^\s<]+)/g)].at(-1)?.[1];
  const channel = [...header.matchAll(/<\|channel\|>\s*(\w+)/g)].at(-1)?.[1];
  if (recipient && !/^(?:assistant|user|all|self)$/.test(recipient)) return { kind: 'call', recipient };
  return { kind: channel === 'analysis' ? 'reasoning' : 'text' };
}

/** The header a call message is passed on with. */
export function callHeader(recipient: string): string {
  return `${CALL_HEADER}${recipient}<|channel|>commentary${MESSAGE}`;
}

export const harmonyFormat: CallFormat = {
  name: 'harmony',
  explicit: true,
  markers: [CALL_HEADER],
  find(text, ctx) {
    const found: Found[] = [];
    for (let start = text.indexOf(CALL_HEADER); start !== -1; start = text.indexOf(CALL_HEADER, start + 1)) {
      const headerEnd = text.indexOf(MESSAGE, start);
      if (headerEnd === -1) break;
      const recipient = text.slice(start + CALL_HEADER.length, text.indexOf('<|channel|>', start));
      const name = recipient.replace(/^functions\./, '');
      const bodyAt = headerEnd + MESSAGE.length;
      const close = text.indexOf(CALL_END, bodyAt);
      const limit = close === -1 ? text.length : close;
      const body = text.slice(bodyAt, limit).trim();
      const call =
        body === '' || body.startsWith('{')
          ? readArguments(text, name, bodyAt, limit, close !== -1, ctx).call
          : unreadableCall(name, 'the message is not JSON');
      found.push({ start, end: close === -1 ? text.length : close + CALL_END.length, calls: [call] });
    }
    return found;
  },
};
