import { estimateTokens } from '../llm/tokens.js';
import type { ChatMessage } from '../llm/types.js';

const messageTokens = new WeakMap<ChatMessage, number>();

/** Estimated tokens of a history, for servers that report no usage. Cached per message: history only grows. */
export function estimateHistoryTokens(messages: ChatMessage[]): number {
  let total = 0;
  for (const m of messages) {
    let n = messageTokens.get(m);
    if (n === undefined) {
      n = 4 + estimateTokens(m.content ?? '');
      if (m.role === 'assistant')
        for (const c of m.tool_calls ?? []) n += estimateTokens(c.function.name + c.function.arguments);
      messageTokens.set(m, n);
    }
    total += n;
  }
  return total;
}
