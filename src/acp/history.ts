import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { ChatMessage } from '../llm/types.js';
import { readTodos } from '../tools/tracking/index.js';
import type { SessionState } from '../tools/types.js';
import { type ToolCallViews, textContent } from './tool-calls.js';
import { planUpdate } from './updates.js';

/** A stored result shown when a loaded session is replayed is cut to this many characters. */
const RESULT_MAX_CHARS = 4000;

/**
 * A stored conversation as the updates an editor replays on `session/load`: what the user said,
 * what the model answered, each call with its result, and the todo list as the plan. The system
 * prompt and Hearth's own notes to the model are not the conversation and stay out.
 */
export function historyUpdates(
  messages: readonly ChatMessage[],
  views: ToolCallViews,
  state: SessionState,
): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  for (const message of messages) {
    if (message.role === 'user') {
      updates.push({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: message.content } });
      for (const image of message.images ?? [])
        updates.push({
          sessionUpdate: 'user_message_chunk',
          content: { type: 'image', mimeType: image.mimeType, data: image.base64 },
        });
    } else if (message.role === 'assistant') {
      if (message.content)
        updates.push({
          sessionUpdate: 'agent_message_chunk',
          content: { type: 'text', text: message.content },
        });
      for (const call of message.tool_calls ?? []) {
        const view = views.describe(call.function.name, call.function.arguments, undefined);
        updates.push({ sessionUpdate: 'tool_call', ...views.started(call.id, view), status: 'completed' });
      }
    } else if (message.role === 'tool') {
      updates.push({
        sessionUpdate: 'tool_call_update',
        toolCallId: message.tool_call_id,
        status: 'completed',
        content: [textContent(message.content.slice(0, RESULT_MAX_CHARS))],
      });
    }
  }
  const todos = readTodos(state);
  if (todos.length > 0) updates.push(planUpdate(todos));
  return updates;
}
