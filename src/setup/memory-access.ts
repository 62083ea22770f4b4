import { join } from 'node:path';
import type { Runtime } from '../agent/runtime.js';
import { hearthHome } from '../config/load.js';
import type { Connection } from '../llm/connection.js';
import { createClient } from '../llm/connection.js';
import { discoverServer } from '../llm/discover.js';
import type { LongTermMemory } from '../memory/memory.js';
import type { ReflectOutcome } from '../memory/reflection/reflect.js';
import type { MemoryFactory } from './session-wiring.js';

/**
 * Long-term memory as every surface opens it, with the user files (USER.md, MEMORY.md) of the
 * Hearth home `home`: the code is imported when a session or a `hearth memory` command first needs
 * it, so starting Hearth (or importing the library) does not pay for it.
 */
export function sessionMemory(home: string): MemoryFactory {
  return async ({ storage: openStorage, config, workspace, connection }) => {
    const { openMemory } = await import('../memory/open-memory.js');
    const storage = await (await openStorage()).memory();
    return openMemory({ storage, config, workspace, home, server: connection });
  };
}

/**
 * Memory for a `hearth memory` command or /memory. Embeddings come from the configured server, or
 * the one discovery finds; with none, search is keyword-only (and says so). The caller closes it.
 */
export async function openCliMemory(
  runtime: Runtime,
  server?: { baseUrl: string } | 'find',
): Promise<LongTermMemory> {
  const { openMemory } = await import('../memory/open-memory.js');
  const found =
    server === 'find'
      ? runtime.config.base_url
        ? { baseUrl: runtime.config.base_url }
        : await discoverServer().catch(() => undefined)
      : server;
  return openMemory({
    storage: await (await runtime.storage()).memory(),
    config: runtime.config,
    workspace: runtime.workspace,
    home: hearthHome(),
    server: found,
  });
}

export function skillsDir(): string {
  return join(hearthHome(), 'skills');
}

/** Sessions shorter than this (messages after the system prompt) have too little to learn from to spend a model call. */
const MIN_MESSAGES_TO_REFLECT = 4;

/**
 * Reflects on sessions that just ended, when the config asks for it: `memory.reflect` is
 * `interactive` (the default: after a REPL session, where the user is leaving anyway) or `always`
 * (also after one-shot runs, which scripts wait on, so not by default: on slow hardware the extra
 * model call can take minutes). Says what it does before each wait, and one line per session after
 * it, through `say`. `skip` stops it: what was not reflected on is left as it was, to do later.
 */
export async function reflectAfterSessions(
  runtime: Runtime,
  connection: Connection,
  sessionIds: readonly string[],
  surface: 'interactive' | 'one-shot',
  say: (line: string) => void,
  skip?: AbortSignal,
): Promise<void> {
  const { memory } = runtime.config;
  if (!memory.enabled || memory.reflect === 'off') return;
  if (memory.reflect === 'interactive' && surface !== 'interactive') return;
  const store = await runtime.sessions();
  const counts = await Promise.all(sessionIds.map(async (id) => (await store.messages(id)).length));
  const worth = sessionIds.filter((_, i) => counts[i]! - 1 >= MIN_MESSAGES_TO_REFLECT);
  let longTerm: LongTermMemory | undefined;
  try {
    for (const [i, id] of worth.entries()) {
      say(`Reflecting on session ${id} to learn from it (memory.reflect; Ctrl+C skips)...`);
      longTerm ??= await openCliMemory(runtime, connection);
      const outcome = skip?.aborted
        ? undefined
        : await reflect(runtime, connection, longTerm, id, undefined, skip);
      // Stopped before its one write: nothing of it was kept, and it can be done later.
      if (outcome === undefined || (skip?.aborted && outcome.status !== 'reflected')) {
        const later = worth.slice(i).map((left) => `hearth memory reflect ${left}`);
        say(`Skipped the reflection; to do it later: ${later.join(', ')}`);
        return;
      }
      say(describeReflection(id, outcome));
    }
  } finally {
    await longTerm?.close();
  }
}

/**
 * Reflects on the messages a session gained since its last reflection, when its workspace config
 * reflects in the background (`memory.enabled`, `memory.reflect` not off) and there are enough of
 * them; undefined when it did not.
 */
export async function reflectOnNewMessages(
  runtime: Runtime,
  connection: Connection,
  sessionId: string,
  signal?: AbortSignal,
): Promise<ReflectOutcome | undefined> {
  const { memory } = runtime.config;
  if (!memory.enabled || memory.reflect === 'off') return undefined;
  const messages = (await (await runtime.sessions()).messages(sessionId)).length;
  const longTerm = await openCliMemory(runtime, connection);
  try {
    const last = await longTerm.store.proposals.lastReflection(sessionId);
    // The system prompt (index 0) is read by no reflection.
    if (messages - 1 - (last?.through ?? 0) < MIN_MESSAGES_TO_REFLECT) return undefined;
    return await reflect(runtime, connection, longTerm, sessionId, undefined, signal);
  } finally {
    await longTerm.close();
  }
}

export async function reflect(
  runtime: Runtime,
  connection: Connection,
  memory: LongTermMemory,
  sessionId: string,
  onProgress?: (text: string) => void,
  signal?: AbortSignal,
): Promise<ReflectOutcome> {
  const { reflectOnSession } = await import('../memory/reflection/reflect.js');
  return reflectOnSession({
    memory,
    sessions: await runtime.sessions(),
    llm: createClient(connection, runtime.config),
    sessionId,
    contextWindow: connection.contextWindow,
    autoAccept: runtime.config.memory.auto_accept,
    skillsDir: skillsDir(),
    onProgress,
    signal,
  });
}

export function describeReflection(sessionId: string, outcome: ReflectOutcome): string {
  switch (outcome.status) {
    case 'already':
      return `Session ${sessionId} was reflected on already (${new Date(outcome.at).toISOString().slice(0, 16).replace('T', ' ')}).`;
    case 'failed':
      return `Reflection on session ${sessionId} failed, nothing was kept: ${outcome.error}`;
    case 'reflected': {
      const n = outcome.proposals.length;
      if (n === 0) return `Session ${sessionId}: nothing new worth remembering.`;
      const waiting = n - outcome.accepted;
      const parts = [
        outcome.accepted > 0 ? `${outcome.accepted} remembered (memory.auto_accept)` : '',
        waiting > 0 ? `${waiting} proposed: review with hearth memory review` : '',
        ...outcome.notes,
      ].filter(Boolean);
      return `Session ${sessionId}: ${parts.join('; ')}.`;
    }
  }
}
