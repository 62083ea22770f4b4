import { ESTIMATE_MARGIN, estimateTokens } from '../llm/tokens.js';
import type { ChatMessage } from '../llm/types.js';

const messageTokens = new WeakMap<ChatMessage, number>();

/**
 * Estimated tokens of a history, erring high, for servers that report no usage and for deciding
 * when to compact. Cached per message: history only grows.
 */
export function estimateHistoryTokens(messages: ChatMessage[]): number {
  let total = 0;
  for (const m of messages) {
    let n = messageTokens.get(m);
    if (n === undefined) {
      n = estimateTokens(m.content ?? '');
      if (m.role === 'assistant')
        for (const c of m.tool_calls ?? []) n += estimateTokens(c.function.name + c.function.arguments);
      // The template's role markers, and room for the estimate to be low.
      n = 4 + Math.ceil(n * ESTIMATE_MARGIN);
      messageTokens.set(m, n);
    }
    total += n;
  }
  return total;
}
