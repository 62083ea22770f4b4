import type { AssistantMessage, ToolCall } from '../llm/types.js';
import { truncateMiddle } from '../tools/truncate.js';

/** However many calls took the room, the reply's text keeps at least this much of itself. */
const MIN_TEXT_CHARS = 1000;

export interface CappedReply {
  message: AssistantMessage;
  toolCalls: ToolCall[];
  /** Set when the reply was cut: what the user is told. */
  warning?: string;
}

/**
 * Bounds what one reply adds to the history to `maxChars` (see `messageCap`): a model that loops
 * can write megabytes, and a history holding them could never again be compacted below the window.
 * Calls keep their arguments whole while they fit (a cut would change what they do); one whose
 * arguments do not fit is not run, and its result tells the model to work in smaller steps. The
 * text keeps its start and end. The person saw the whole reply as it streamed.
 */
export function capReply(message: AssistantMessage, calls: ToolCall[], maxChars: number): CappedReply {
  const text = message.content ?? '';
  const size = text.length + calls.reduce((n, c) => n + c.arguments.length, 0);
  if (size <= maxChars) return { message, toolCalls: calls };

  let room = maxChars;
  const refused = new Set<string>();
  const toolCalls = calls.map((call) => {
    if (call.problem || call.arguments.length <= room) {
      room -= call.arguments.length;
      return call;
    }
    refused.add(call.id);
    return { ...call, arguments: '{}', problem: tooLarge(call.arguments.length, maxChars) };
  });
  const textRoom = Math.max(room, Math.min(maxChars, MIN_TEXT_CHARS));
  const content = truncateMiddle(text, textRoom, {
    hint: 'this reply was cut to fit the context window',
  }).text;
  const capped: AssistantMessage = {
    ...message,
    content: message.content === null ? null : content,
    ...(message.tool_calls
      ? {
          tool_calls: message.tool_calls.map((c) =>
            refused.has(c.id) ? { ...c, function: { ...c.function, arguments: '{}' } } : c,
          ),
        }
      : {}),
  };
  const kept = (capped.content ?? '').length + toolCalls.reduce((n, c) => n + c.arguments.length, 0);
  const notRun =
    refused.size > 0
      ? `; ${refused.size} call${refused.size === 1 ? '' : 's'} whose arguments did not fit ${refused.size === 1 ? 'was' : 'were'} not run`
      : '';
  return {
    message: capped,
    toolCalls,
    warning: `The model's reply was ${size} characters, more than one reply may add to the conversation in this context window (${maxChars}); ${kept} were kept${notRun}.`,
  };
}

function tooLarge(size: number, maxChars: number): string {
  return `Not run: the arguments of this call were ${size} characters, more than one reply may hold in this context window (about ${maxChars}). Do the work in smaller steps: for a long file, write a first part, then add the rest with further edits.`;
}
