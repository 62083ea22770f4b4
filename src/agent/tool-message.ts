import type { ChatMessage } from '../llm/types.js';

/**
 * A call's result as the history keeps it: the text the model reads, a failure marked with the
 * prefix the model knows as an error. The history stores nothing else about the call, so the views
 * of a stored session (the gateway's history, transcripts) read that same mark back through
 * `failedResult`. An output that succeeded yet begins with "Error: " reads back as a failure.
 */
const FAILED = 'Error: ';

export function toolResultMessage(callId: string, ok: boolean, output: string): ChatMessage {
  return { role: 'tool', tool_call_id: callId, content: ok ? output : `${FAILED}${output}` };
}

/** Whether a stored tool message says its call failed. */
export function failedResult(content: string): boolean {
  return content.startsWith(FAILED);
}
