import type { SessionWiring } from '../agent/runtime.js';
import { openCheckpoints } from '../checkpoints/open.js';
import { checkpointPort } from '../checkpoints/port.js';
import type { Config } from '../config/schema.js';
import type { Connection } from '../llm/connection.js';
import type { SessionStorage } from '../store/session-storage.js';
import type { Storage } from '../store/storage.js';
import type { MemoryPort } from '../tools/memory/index.js';
import { memoryTools } from '../tools/memory/index.js';
import { bindAlso } from '../tools/ported.js';
import { type WakeupPort, wakeupTools } from '../tools/tracking/index.js';

/*
 * What the subsystems above agent/ add to each session (src/agent/runtime.ts SessionWiring): their
 * tools bound to the session's own ports, made once the session has its id. A gateway runs many
 * sessions in one process: each gets its own ports here, never another session's.
 */

/** schedule_wakeup, bound to each stored session's wake-ups (SQLite or PostgreSQL). */
export function wakeupWiring(): SessionWiring {
  return {
    wire(deps) {
      const port = (sessionId: string) => wakeupPort(deps.store, sessionId);
      return {
        ...deps,
        sessionTools: (session) => {
          const wakeups = port(session.sessionId);
          const bound = wakeups ? wakeupTools.bind(wakeups) : new Map();
          return bindAlso(deps.sessionTools?.(session), bound);
        },
      };
    },
  };
}

function wakeupPort(store: SessionStorage, sessionId: string): WakeupPort | undefined {
  const wakeups = store.wakeups();
  if (!wakeups) return undefined;
  return {
    now: () => Date.now(),
    schedule: (at, message) => wakeups.add(sessionId, at, message, Date.now()),
  };
}

/** Long-term memory as a session uses it (src/memory implements it). */
export interface SessionMemory {
  /** The memory tools' port, bound to a session: what they keep links to its message. */
  forSession(origin: { sessionId: string; messageSeq(): number }): MemoryPort;
  /**
   * What a new session's first message starts with, before its task: the memories that task
   * needs. Undefined when there is nothing to say.
   */
  preface(task: string, signal?: AbortSignal): Promise<string | undefined>;
  /** Releases what it holds (a PostgreSQL pool). */
  close(): Promise<void>;
}

export type MemoryFactory = (ports: {
  storage: () => Promise<Storage>;
  config: Config;
  workspace: string;
  connection: Connection | undefined;
}) => Promise<SessionMemory>;

/**
 * Long-term memory for the sessions of a runtime where `memory.enabled`: the memory block before a
 * new session's first task, and the memory tools bound to the session. Opened on first use, once
 * per server (a REPL that started without one opens it again once it connects); every memory
 * opened is closed with the runtime, since a session may still hold one the REPL replaced.
 */
export function memoryWiring(factory: MemoryFactory): SessionWiring {
  let current: { server: string | undefined; opened: Promise<SessionMemory> } | undefined;
  const opened: Array<Promise<SessionMemory>> = [];
  return {
    async wire(deps, connection, runtime) {
      const { config, workspace } = runtime;
      if (!config.memory.enabled) return deps;
      if (!current || current.server !== connection?.baseUrl) {
        current = {
          server: connection?.baseUrl,
          opened: factory({ storage: () => runtime.storage(), config, workspace, connection }),
        };
        opened.push(current.opened);
      }
      const memory = await current.opened;
      return {
        ...deps,
        preface: (task, signal) =>
          memory.preface(task, signal).catch((err: unknown) => {
            throw new Error(`Memories could not be read: ${(err as Error).message}`);
          }),
        sessionTools: (session) =>
          bindAlso(deps.sessionTools?.(session), memoryTools.bind(memory.forSession(session))),
      };
    },
    async close() {
      // Memory that failed to open has nothing to close.
      await Promise.all(opened.map(async (memory) => (await memory.catch(() => undefined))?.close()));
    },
  };
}

/**
 * Checkpoints of the runtime's workspace before each turn's changes (src/checkpoints/): one store
 * per runtime, shared by its sessions and their sub-agents, so their snapshots take turns.
 */
export function checkpointWiring(home: string, settings: Config['checkpoints']): SessionWiring {
  let store: ReturnType<typeof openCheckpoints> | undefined;
  return {
    wire(deps) {
      store ??= openCheckpoints(home, deps.workspace, settings);
      return 'off' in store ? deps : { ...deps, checkpoints: checkpointPort(store) };
    },
  };
}
