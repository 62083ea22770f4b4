import type { LlmClient } from '../llm/client.js';
import { DEFAULT_CONTEXT_WINDOW } from '../llm/probe.js';
import type { SideModelPort } from '../tools/types.js';

/**
 * The session's model as tools see it for a request of their own (`ToolContext.model`): one
 * system and one user message, the answer's text back, nothing added to the conversation.
 */
export function sideModel(llm: LlmClient, contextWindow: number): SideModelPort {
  return {
    contextWindow: contextWindow || DEFAULT_CONTEXT_WINDOW,
    async ask({ system, user }, signal) {
      const messages = [
        { role: 'system' as const, content: system },
        { role: 'user' as const, content: user },
      ];
      for await (const event of llm.stream({ messages, signal })) {
        if (event.type === 'error') throw new Error(event.error.message);
        if (event.type === 'done') return event.message.content?.trim() ?? '';
      }
      throw new Error('the model stream ended without an answer');
    },
  };
}
