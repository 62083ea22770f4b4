/**
 * Sessions and everything kept with them, behind one asynchronous interface with two backends:
 * SQLite (src/store/sqlite-sessions.ts, the default, one file per user) and PostgreSQL
 * (src/store/postgres/sessions.ts, shared by several machines). src/store/storage.ts picks one
 * from the config; test/store/session-storage.test.ts runs the same suite against both.
 *
 * A running session writes through a `SessionJournal`: its calls are synchronous (the agent loop
 * appends a message, records an audit entry or sets a todo list without waiting on a database),
 * and the writes are applied in the order they were made. The crash guarantee differs by backend,
 * and is exactly this:
 * - SQLite: every journal call is committed before it returns, as it always was: a killed process
 *   loses at most the write in progress.
 * - PostgreSQL: journal calls are queued and sent in order on the session's own chain; `flush()`
 *   waits for them. AgentSession flushes before every model request, before it pauses for an
 *   approval and at the end of each run, so a killed process loses at most what one step wrote
 *   since the last request (the tool results of that step, never a message out of order: writes
 *   after a failed one are dropped, and the stored session ends at its last committed message,
 *   where it resumes as after a crash).
 * The durable state is loaded when the journal opens (PostgreSQL) and read from the file on every
 * `get` (SQLite); within one process every journal of a session is the same object, so tools,
 * the gateway and a sub-agent's parent see one state.
 */

import type { ChatMessage } from '../llm/types.js';
import type {
  AuditEntry,
  NewSession,
  SessionRow,
  SessionState,
  SessionSummary,
  TurnSpeed,
  UsageRecord,
  UsageReport,
  UsageTotals,
} from './rows.js';
import type { SessionLeases } from './run-lease.js';
import type { WakeupStorage } from './scheduler-storage.js';

export type SessionFields = Partial<Pick<SessionRow, 'title' | 'model' | 'status'>>;

/** What a running session writes, in order (see the header for what a crash keeps). */
export interface SessionJournal {
  readonly id: string;
  /** The session's durable key-value state (todos, plan, "always" answers, compaction). */
  readonly state: SessionState;
  appendMessage(message: ChatMessage): void;
  update(fields: SessionFields): void;
  recordUsage(usage: UsageRecord): void;
  recordAudit(entry: AuditEntry): void;
  /** Keeps what a person sees of a call in full (`hearth sessions output` prints it back). */
  saveToolOutput(callId: string, body: string): void;
  /** Resolves once every write made so far is committed; rejects with the first that failed. */
  flush(): Promise<void>;
  /**
   * Reads the durable state again from the store (after flushing), for a session another process
   * may have run since this journal loaded it. A no-op where every `get` reads the store.
   */
  reload(): Promise<void>;
}

export interface SessionStorage {
  /** Where the sessions are, for messages: the SQLite file, or the database URL without its password. */
  readonly location: string;
  /** Each session's run lease (run-lease.ts): one writer per conversation. */
  readonly leases: SessionLeases;
  /** Creates a session with its first messages in one transaction: none is ever seen without them. */
  create(input: NewSession, messages?: ChatMessage[]): Promise<SessionRow>;
  /** Rejects with SessionNotFoundError. */
  get(id: string): Promise<SessionRow>;
  /** By id or unique id prefix, as people type them; rejects with SessionNotFoundError saying why. */
  resolve(idOrPrefix: string): Promise<SessionRow>;
  /** The session `--continue` picks up: the last one a person started in the workspace. */
  latest(workspace: string): Promise<SessionRow | undefined>;
  /** The most recent sessions; `topLevel` leaves sub-agents' sessions out. */
  list(opts?: { workspace?: string; limit?: number; topLevel?: boolean }): Promise<SessionSummary[]>;
  /** The sessions the agent of `id` started as sub-agents (not its forks), oldest first. */
  subagents(id: string): Promise<SessionSummary[]>;
  /** The sub-agents' sessions under `id` at every depth: depth first, each level oldest first. */
  subagentTree(id: string): Promise<SessionSummary[]>;
  update(id: string, fields: SessionFields): Promise<void>;
  /** Deletes a session with its sub-agents' sessions (not its forks, which stand on their own). */
  remove(id: string): Promise<void>;
  appendMessage(id: string, message: ChatMessage): Promise<void>;
  messages(id: string): Promise<ChatMessage[]>;
  /** How many messages the session has stored: the seq its next one gets. */
  messageCount(id: string): Promise<number>;
  /**
   * A new session holding a copy of another's history and state; with `before`, only the messages
   * before that seq (a rewind of the conversation to the start of a turn).
   */
  fork(id: string, opts?: { before?: number }): Promise<SessionRow>;
  recordUsage(id: string, usage: UsageRecord): Promise<void>;
  /** Token usage of every model request made at or after `since` (epoch ms; undefined: all time). */
  usage(since?: number): Promise<UsageReport>;
  /** Tokens one session spent, over all its requests. */
  sessionUsage(id: string): Promise<UsageTotals>;
  /** How fast each reply of a session came, where it was known, in order. */
  speeds(id: string): Promise<TurnSpeed[]>;
  /** How many sessions are stored, sub-agents' included. */
  count(): Promise<number>;
  recordAudit(id: string, entry: AuditEntry): Promise<void>;
  audit(id: string): Promise<Array<AuditEntry & { createdAt: number }>>;
  saveToolOutput(id: string, callId: string, body: string): Promise<void>;
  toolOutput(id: string, callId: string): Promise<string | undefined>;
  /** The journal a running session writes through; one object per session within this storage. */
  journal(id: string): Promise<SessionJournal>;
  /** Reads one value of a session's durable state. */
  readState(id: string, key: string): Promise<unknown>;
  /** Sets one value of a session's durable state (undefined removes it), committed when it resolves. */
  writeState(id: string, key: string, value: unknown): Promise<void>;
  /** Sessions set to resume later, kept beside them; the scheduler fires them. */
  wakeups(): WakeupStorage | undefined;
  close(): Promise<void>;
}

/**
 * One journal object per session id while anybody holds it, so every part of a process sees the
 * same durable state. Held weakly: a long-running gateway does not keep every session it served.
 */
export class JournalCache<J extends SessionJournal> {
  private readonly open = new Map<string, WeakRef<J> | Promise<J>>();
  private readonly gone = new FinalizationRegistry<string>((id) => {
    const held = this.open.get(id);
    if (held instanceof WeakRef && held.deref() === undefined) this.open.delete(id);
  });

  async get(id: string, make: () => Promise<J>): Promise<J> {
    const held = this.open.get(id);
    if (held instanceof Promise) return held;
    const live = held?.deref();
    if (live) return live;
    const making = make();
    this.open.set(id, making);
    try {
      const journal = await making;
      this.open.set(id, new WeakRef(journal));
      this.gone.register(journal, id);
      return journal;
    } catch (err) {
      this.open.delete(id);
      throw err;
    }
  }

  /** Stops handing out `journal` (it failed): the next caller loads the session afresh. */
  forget(id: string, journal: J): void {
    const held = this.open.get(id);
    if (held instanceof WeakRef && held.deref() === journal) this.open.delete(id);
  }

  /** The journals still held, to flush before closing. */
  held(): J[] {
    return [...this.open.values()].flatMap((h) => {
      const journal = h instanceof WeakRef ? h.deref() : undefined;
      return journal ? [journal] : [];
    });
  }
}
