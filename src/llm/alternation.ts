import type { ChatMessage } from './types.js';

/**
 * The history as a server is sent it, with user and assistant taking turns as strict chat templates
 * demand. Mistral's (mistralai/Mistral-7B-Instruct-v0.3, Mistral Nemo) raises "conversation roles
 * must alternate" when, leaving out tool results and assistant tool-call turns, two user messages
 * follow each other; Gemma's has the same rule. A stored history can break it: a process killed
 * mid-reply leaves the task without its answer before the next one (or the calls it was answering
 * before it), messages sent during a run arrive after tool results, a compaction's summary comes
 * before the user's latest words. So:
 * - user messages in a row are merged into one;
 * - a user message after tool results that the model did not answer in text gets a short assistant
 *   turn before it (`BRIDGE`), when `bridges` is on (node-llama-cpp keeps tool results inside the
 *   model's turn, so the embedded transport needs no bridge).
 * What is stored stays as it was; only the request changes.
 *
 * Requests stay append-only: a merge happens only among messages the model has not answered, a
 * bridge only goes before a message new to this request, and each merged message and each bridge
 * is one object per run of user messages (memoised by its parts), so RequestBodies writes its JSON
 * once and later requests extend the bytes before them. A merged text starts with the first
 * message's text, so even a server that cached a request ending with it (the one a killed process
 * sent) reuses that cache up to there.
 */
export function alternating(messages: readonly ChatMessage[], bridges = true): readonly ChatMessage[] {
  let out: ChatMessage[] | undefined;
  // The role of the last message that counts as a turn (not a tool result, not a tool-call turn).
  let lastTurn: 'user' | 'assistant' | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== 'user') {
      out?.push(m);
      if (m.role === 'assistant' && !m.tool_calls?.length) lastTurn = 'assistant';
      continue;
    }
    let end = i + 1;
    while (messages[end]?.role === 'user') end++;
    const run = messages.slice(i, end) as UserMessage[];
    const user = run.length === 1 ? m : merged(run);
    // Only tool-call turns and their results since the last user turn: the model has not answered it.
    const bridge = bridges && lastTurn === 'user' ? bridgeBefore(user) : undefined;
    if (user !== m || bridge) {
      out ??= messages.slice(0, i);
      if (bridge) out.push(bridge);
      out.push(user);
    } else out?.push(m);
    lastTurn = 'user';
    i = end - 1;
  }
  return out ?? messages;
}

/** What the model is shown as its turn between tool results it did not answer and the next message. */
export const BRIDGE = '[no reply before the next message]';

type UserMessage = Extract<ChatMessage, { role: 'user' }>;

/** The merged message of a run of user messages, by its last message; reused while its parts are the same. */
const merges = new WeakMap<ChatMessage, { parts: UserMessage[]; message: UserMessage }>();
/** The bridge before a user message (as sent), one object per message. */
const bridgesBefore = new WeakMap<ChatMessage, ChatMessage>();

function merged(parts: UserMessage[]): UserMessage {
  const last = parts.at(-1)!;
  const known = merges.get(last);
  if (known && known.parts.length === parts.length && known.parts.every((p, i) => p === parts[i]))
    return known.message;
  const images = parts.flatMap((p) => p.images ?? []);
  const message: UserMessage = {
    role: 'user',
    content: parts.map((p) => p.content).join('\n\n'),
    ...(images.length > 0 ? { images } : {}),
  };
  merges.set(last, { parts, message });
  return message;
}

function bridgeBefore(user: ChatMessage): ChatMessage {
  let bridge = bridgesBefore.get(user);
  if (!bridge) {
    bridge = { role: 'assistant', content: BRIDGE };
    bridgesBefore.set(user, bridge);
  }
  return bridge;
}
