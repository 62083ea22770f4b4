import { namedCall } from '../../tools/deferred/search-tools.js';
import { callLine, firstLine, type Style } from '../render.js';
import { visible } from '../sanitize.js';
import type { HistoryMessage } from './gateway-client.js';

/** A message a person sent, as attach shows it: the live ones and the stored ones alike. */
export function userLine(text: string, images: unknown, style: Style): string {
  const count = Array.isArray(images) ? images.length : 0;
  const attached = count > 0 ? style.dim(` [${count} image${count === 1 ? '' : 's'}]`) : '';
  return `${style.bold(`› ${visible(text)}`)}${attached}`;
}

const text = (value: unknown) => (typeof value === 'string' ? value : '');

interface StoredCall {
  id: string;
  name: string;
  arguments: string;
}

function callsOf(message: HistoryMessage): StoredCall[] {
  if (!Array.isArray(message.tool_calls)) return [];
  return message.tool_calls.map(
    (call: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }) =>
      namedCall({
        id: text(call?.id),
        name: text(call?.function?.name),
        arguments: text(call?.function?.arguments),
      }),
  );
}

/**
 * Stored messages `[from, to)` of a session's history as attach shows turns run outside the gateway
 * (in the terminal): what the person wrote, the answers, and each call with how it ended, found in
 * the whole history (a result may come after the range). Everything shown is made visible first.
 */
export function storedLines(
  history: readonly HistoryMessage[],
  from: number,
  to: number,
  style: Style,
): string[] {
  const results = new Map<string, HistoryMessage>();
  for (const message of history) {
    if (message.role === 'tool' && typeof message.tool_call_id === 'string')
      results.set(message.tool_call_id, message);
  }
  const lines: string[] = [];
  for (const message of history.slice(from, to)) {
    if (message.role === 'user') {
      lines.push(userLine(text(message.text) || text(message.content), message.images, style));
    } else if (message.role === 'assistant') {
      if (text(message.content).trim()) lines.push(visible(text(message.content).trim()));
      for (const call of callsOf(message)) {
        const label = style.cyan(visible(callLine(call)));
        const result = results.get(call.id);
        if (!result) lines.push(`${style.yellow('…')} ${label} ${style.dim('(no result)')}`);
        else if (result.success === false)
          lines.push(`${style.red('✗')} ${label} ${style.red(visible(firstLine(text(result.content))))}`);
        else lines.push(`${style.green('✓')} ${label}`);
      }
    }
  }
  return lines;
}
