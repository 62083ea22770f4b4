import type { ChatMessage } from '../llm/types.js';
import type { SessionJournal, SessionStorage } from '../store/session-storage.js';
import { truncateMiddle } from '../tools/truncate.js';

/** Kept in the session state: the history that replaced messages [0, fromSeq) at the last compaction. */
export interface CompactionRecord {
  fromSeq: number;
  history: ChatMessage[];
}

export const COMPACTION_KEY = 'compaction';

/**
 * Starts a stored session's conversation over from its system prompt (the gateway's `clear`). The
 * stored messages stay, as after a compaction: the history simply begins after them.
 */
export async function restartConversation(store: SessionStorage, id: string): Promise<void> {
  const stored = await store.messages(id);
  if (stored.length === 0) return;
  const record: CompactionRecord = { fromSeq: stored.length, history: stored.slice(0, 1) };
  await store.writeState(id, COMPACTION_KEY, record);
}

/** A session's history as stored (the compacted part, then what came after it), and how many messages it has stored. */
export async function storedHistory(
  store: SessionStorage,
  journal: SessionJournal,
  id: string,
): Promise<{ history: ChatMessage[]; count: number }> {
  // Another process may have run it since this process last loaded its state.
  await journal.reload();
  const stored = await store.messages(id);
  const compaction = journal.state.get(COMPACTION_KEY) as CompactionRecord | undefined;
  const history = compaction ? [...compaction.history, ...stored.slice(compaction.fromSeq)] : stored;
  return { history, count: stored.length };
}

/** What a tool_result event carries of a call's display; the whole of it stays in the store. */
const DISPLAY_EVENT_CHARS = 16_000;

export function boundedDisplay(display: string, sessionId: string, callId: string): string {
  return truncateMiddle(display, DISPLAY_EVENT_CHARS, {
    hint: `the full output is kept: hearth sessions output ${sessionId} ${callId}`,
  }).text;
}
