/**
 * What a gateway turn is on both sides of the shared database: the reply a turn ends with (the
 * gateway answers it over HTTP, a worker stores it as the task's `detail`), and the port through
 * which a worker runs the turn in a session of its own (the gateway's live session, built in
 * `server/worker-sessions.ts`, so that cluster/ never imports the gateway).
 */
import type { DoneEvent } from '../agent/events.js';
import type { Config } from '../config/schema.js';
import type { ApprovalAnswer } from '../permissions/gate.js';
import type { EventLog } from '../store/event-log.js';
import type { QueuedTurn } from '../store/postgres/queue.js';
import type { SessionStorage } from '../store/session-storage.js';
import type { Db } from '../store/sqlite/database.js';
import type { Storage } from '../store/storage.js';
import type { RunMode, usageJson } from './wire.js';

/** What a finished turn returns over HTTP: the agent_computer reply, with Hearth's stop reason. */
export interface TurnResult {
  session_id: string;
  text: string;
  /** The agent_computer gateway's later name for `text`. */
  response: string;
  iterations: number;
  model: string;
  usage: ReturnType<typeof usageJson>;
  mode: RunMode;
  reason: DoneEvent['reason'];
}

export interface CompactResult {
  method: 'elided' | 'summary' | 'trimmed' | 'none';
  before: number;
  after: number;
}

/**
 * What the worker stores as a turn's `detail`: the reply (with `unsteered`, messages steered in
 * too late for the run, for the session's next turn), or why there is none.
 */
export type TurnDetail =
  | { result: unknown; unsteered?: string[] }
  | { error: { status: number; detail: string } };

/** What a worker's turn needs of the session it runs in (the gateway's `LiveSession` has it all). */
export interface TurnSession {
  readonly approvals: {
    expect(callId: string): void;
    answer(callId: string, answer: ApprovalAnswer): unknown;
  };
  /** Something runs in it now. */
  readonly busy: boolean;
  /** Messages steered in that no run has taken yet. */
  readonly unsteered: readonly string[];
  send(input: {
    text?: string;
    /** Checked against the gateway's schema before they were queued. */
    images?: QueuedTurn['images'];
    mode?: RunMode;
    model?: string;
  }): { result: Promise<TurnResult> };
  compact(): { result: Promise<CompactResult> };
  steer(text: string): Promise<boolean>;
  abort(): Promise<boolean>;
  answer(callId: string, answer: ApprovalAnswer): Promise<unknown>;
}

/** The sessions a worker runs gateway turns in: a session hub of its own over the shared database. */
export interface TurnSessions {
  readonly store: Pick<SessionStorage, 'messages' | 'leases'>;
  readonly events: Pick<EventLog, 'lastSeq'>;
  session(id: string): Promise<TurnSession>;
  /** The status and message a failure becomes, as the gateway would have answered it. */
  describe(err: unknown): { status: number; detail: string };
  close(): Promise<void>;
}

/** What a worker's session hub is made of; the hub owns (and closes) them from then on. */
export interface TurnSessionParts {
  db: Db;
  events: EventLog;
  sessions: SessionStorage;
  /** The worker's Storage, kept open by the worker: the sessions' runtimes take their stores from it. */
  storage: Storage;
  config: Config;
  /** The folder the worker was started in: sessions there run with `config`. */
  workspace: string;
  /** The settings of a session in another folder, with notes on what its files may not set. */
  configFor: (workspace: string) => Promise<{ config: Config; notes: string[] }>;
}

export type OpenTurnSessions = (parts: TurnSessionParts) => TurnSessions;
