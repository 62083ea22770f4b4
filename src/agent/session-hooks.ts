import type { SessionHooks } from '../hooks/hooks.js';
import { writeTranscript } from '../hooks/transcript.js';
import type { ChatMessage } from '../llm/types.js';
import type { SessionRow } from '../store/rows.js';
import type { SessionDeps } from './session-deps.js';

/**
 * The configured hooks bound to a session, or undefined when none are configured. A sub-agent's
 * session is part of its parent's: its hooks name the parent's session, as Claude Code's do, and
 * it has no SessionStart (`parentOwned`), and SubagentStop for Stop.
 */
export function sessionHooks(
  deps: SessionDeps,
  row: SessionRow,
  messages: () => readonly ChatMessage[],
): { hooks: SessionHooks; parentOwned: boolean } | undefined {
  if (!deps.hooks || deps.hooks.count === 0) return undefined;
  const dir = deps.transcriptDir;
  const transcriptOf = (id: string, read: () => Promise<readonly ChatMessage[]>) => async () =>
    dir ? writeTranscript(dir, id, await read()) : '';
  const own = { id: row.id, transcript: transcriptOf(row.id, async () => messages()) };
  const permissionMode = () => deps.gate.mode;
  const parentId = row.depth > 0 ? row.parentId : null;
  const hooks = deps.hooks.forSession(
    parentId
      ? {
          id: parentId,
          transcript: transcriptOf(parentId, () => deps.store.messages(parentId)),
          permissionMode,
          agent: { ...own, ...(deps.agentType ? { type: deps.agentType } : {}) },
        }
      : { ...own, permissionMode },
  );
  return { hooks, parentOwned: parentId !== null };
}
