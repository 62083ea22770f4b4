import { estimateTokens } from '../../llm/tokens.js';
import type { ChatMessage } from '../../llm/types.js';

/** One message of a session as reflection reads it: numbered by its seq, so proposals can cite it. */
export interface TranscriptLine {
  seq: number;
  text: string;
  tokens: number;
}

/** Tool output says whether a step worked; more of it only costs the model's time. */
const TOOL_RESULT_CHARS = 600;
const CALL_ARGUMENT_CHARS = 300;
const MESSAGE_CHARS = 4000;

/**
 * The session as numbered lines: the system prompt left out (it is the same every time), tool
 * calls and results shortened. `seq` is the message's place in the store, which memories link to.
 */
export function transcriptLines(messages: readonly ChatMessage[]): TranscriptLine[] {
  const lines: TranscriptLine[] = [];
  messages.forEach((message, seq) => {
    const text = render(message);
    if (text === undefined) return;
    const line = `[${seq} ${message.role}] ${text}`;
    lines.push({ seq, text: line, tokens: estimateTokens(line) + 1 });
  });
  return lines;
}

function render(message: ChatMessage): string | undefined {
  switch (message.role) {
    case 'system':
      return undefined;
    case 'user':
      return clip(message.content, MESSAGE_CHARS);
    case 'tool':
      return clip(message.content, TOOL_RESULT_CHARS);
    case 'assistant': {
      const calls = (message.tool_calls ?? []).map(
        (call) => `${call.function.name}(${clip(call.function.arguments, CALL_ARGUMENT_CHARS)})`,
      );
      const text = clip(message.content ?? '', MESSAGE_CHARS);
      return [text, ...calls.map((c) => `calls ${c}`)].filter(Boolean).join('\n') || undefined;
    }
  }
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)} [... ${text.length - max} more characters]`;
}

/**
 * Splits the lines into chunks of at most `budget` tokens, in order; a line longer than the
 * budget is a chunk of its own (lines are already clipped, so it cannot be much longer).
 */
export function chunkTranscript(lines: readonly TranscriptLine[], budget: number): TranscriptLine[][] {
  const chunks: TranscriptLine[][] = [];
  let current: TranscriptLine[] = [];
  let used = 0;
  for (const line of lines) {
    if (current.length > 0 && used + line.tokens > budget) {
      chunks.push(current);
      current = [];
      used = 0;
    }
    current.push(line);
    used += line.tokens;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
