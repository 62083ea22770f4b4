import type { ChatMessage, ToolCall } from '../llm/types.js';

/** The calls of the last assistant message that have no result yet. */
export function unansweredCalls(messages: ChatMessage[]): ToolCall[] {
  const last = messages.findLastIndex((m) => m.role === 'assistant');
  const assistant = messages[last];
  if (assistant?.role !== 'assistant' || !assistant.tool_calls?.length) return [];
  const answered = new Set(
    messages.slice(last + 1).flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])),
  );
  return assistant.tool_calls
    .filter((c) => !answered.has(c.id))
    .map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
}

/** What a paused run's done event says. */
export function pausedText(pending: ToolCall[]): string {
  return `Waiting for approval of ${pending.length} call(s): ${pending.map((c) => c.name).join(', ')}.`;
}
