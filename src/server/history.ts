import { failedResult } from '../agent/tool-message.js';
import type { EventRecorder } from '../cluster/recorder.js';
import type { ChatMessage } from '../llm/types.js';
import { withoutMemoryBlock } from '../memory/memory-block.js';
import type { SessionStorage } from '../store/session-storage.js';

/** A stored message as `GET /api/sessions/{id}/history` gives it. */
export type ShownMessage = ChatMessage & { text?: string; success?: boolean };

/**
 * The stored messages of a session as clients show them: each as stored (what the model was given),
 * plus what a person's view needs that the message does not say plainly: a user message's `text`,
 * what the person wrote (without the memory block a first message starts with), and a tool
 * message's `success`. The web UI and `hearth attach` read these, so neither knows how the
 * history marks them.
 */
export function shownMessages(messages: readonly ChatMessage[]): ShownMessage[] {
  return messages.map((message) => {
    if (message.role === 'user') return { ...message, text: withoutMemoryBlock(message.content) };
    if (message.role === 'tool') return { ...message, success: !failedResult(message.content) };
    return message;
  });
}

/** How many messages a session had stored when the gateway last finished work on it. */
const SHOWN_KEY = 'gateway.shown_messages';

/** Stored messages no event shows: `[from, to)` of the session's history. */
export interface UnshownMessages {
  from: number;
  to: number;
}

/**
 * The stored messages of a session no event in its log shows: the turns run outside the gateway
 * (the REPL, a one-shot run) since it last worked on the session, or all of them while the log is
 * empty (a session begun in the terminal, a fork). Undefined when there are none, or when the log
 * was begun before the gateway kept this count (its terminal turns cannot be placed).
 */
export async function unshownMessages(
  store: SessionStorage,
  id: string,
  lastSeq: () => Promise<number>,
): Promise<UnshownMessages | undefined> {
  const [to, shown, last] = await Promise.all([
    store.messageCount(id),
    store.readState(id, SHOWN_KEY),
    lastSeq(),
  ]);
  // Every session's first message is its system prompt, which no view shows.
  const from = last === 0 ? 1 : typeof shown === 'number' ? shown : undefined;
  return from !== undefined && to > from ? { from, to } : undefined;
}

/**
 * Runs the gateway's own work on a session (a turn, a compaction) between two marks: first, the
 * messages stored elsewhere since its last work, as one `stored_messages` event in the log where
 * they belong among the events (clients read them from the history); then, once the work is over,
 * the count of messages stored, all of which the events now account for.
 */
export async function showingStored<T>(
  store: SessionStorage,
  recorder: EventRecorder,
  work: () => Promise<T>,
): Promise<T> {
  const id = recorder.sessionId;
  const unshown = await unshownMessages(store, id, () => recorder.stored());
  if (unshown) recorder.record({ type: 'stored_messages', ...unshown });
  try {
    return await work();
  } finally {
    const count = await store.messageCount(id).catch(() => undefined);
    if (count !== undefined) await store.writeState(id, SHOWN_KEY, count).catch(() => undefined);
  }
}
