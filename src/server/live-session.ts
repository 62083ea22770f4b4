/**
 * A session as the gateway holds it, whoever runs its turns: this process (`LocalSession`), or
 * `hearth worker`s it relays them to (`RemoteSession`, `gateway.turns: workers`). The hub, the
 * routes and the sockets see only the `LiveSession` interface; the hub picks the kind as it opens
 * a session (`openLiveSession`). What both share (the queue of work, events, approvals, orders
 * sent on to a worker running the session) is `SessionActor`.
 */
import type { AgentSession } from '../agent/session.js';
import type { EventRecorder, Ready, Subscriber } from '../cluster/recorder.js';
import type { RunningTurn } from '../cluster/turn-queue.js';
import type { CompactResult, TurnResult } from '../cluster/turn-types.js';
import type { RunFacts, RunMode, WireEvent } from '../cluster/wire.js';
import type { ApprovalAnswer } from '../permissions/gate.js';
import type { EventLog } from '../store/event-log.js';
import type { QueuedTurn } from '../store/postgres/queue.js';
import type { SessionRow } from '../store/rows.js';
import type { SessionStorage } from '../store/session-storage.js';
import type { SessionState } from '../tools/types.js';
import type { AnswerOutcome, ApprovalBook } from './approvals.js';
import type { UnshownMessages } from './history.js';
import { LocalSession } from './local-session.js';
import { RemoteSession } from './remote-session.js';
import type { ImageInput } from './schemas.js';
import type { TurnRelay } from './turn-relay.js';

/** An agent session ready to run, with what its runs report besides their events. */
export interface OpenedAgent {
  session: AgentSession;
  /** Changes when the model or mode does: the agent session is then opened again. */
  key: string;
  facts: Omit<RunFacts, 'usage' | 'mode'>;
  /** Whether the model accepts images (config or server probe); unknown when unset. */
  vision?: boolean;
  /** Said once per session in this process: a weak sandbox, ignored settings, a guessed window. */
  notes: string[];
}

/** What a live session needs from the hub that holds it. */
export interface SessionHost {
  store: SessionStorage;
  events: EventLog;
  now: () => number;
  approvalTimeoutMs: number;
  /** The agent session for the next run: `current` again when the model and mode are unchanged. */
  open(
    row: SessionRow,
    options: { model?: string; mode: RunMode; live: LiveSession; current?: OpenedAgent },
  ): Promise<OpenedAgent>;
  activity(event: WireEvent, sessionId: string): void;
  /** Turns run by `hearth worker`s and orders sent on to them (a shared database); absent: none. */
  remote?: TurnRelay;
  /** The model chosen at run time, sent with turns queued to workers (their servers are their own). */
  readonly selectedModel?: string;
  /** The session has nothing running, queued or watching: the hub may let it go. */
  idle(live: LiveSession): void;
  /** A turn of the session starts, or the last queued one ended (background reflection waits for quiet). */
  turns(id: string, state: 'working' | 'quiet'): void;
  /** Of a session's setup notes, those not told yet in this process (a let-go session comes back). */
  untold(id: string, notes: readonly string[]): string[];
}

/** Work handed to a session: where it stands in the queue, when it starts, how it ends. */
export interface Queued<T> {
  /** 0: it runs now; n: n items run before it. */
  position: number;
  started: Promise<number>;
  result: Promise<T>;
}

/** A message for a session: `text` undefined carries on a paused run. */
export interface MessageInput {
  text?: string;
  images?: ImageInput[];
  mode?: RunMode;
  model?: string;
  /** For a worker's run: answers to the calls the paused run waits on (see `answer`). */
  answers?: QueuedTurn['answers'];
}

/**
 * One session as the gateway runs it: a queue of work done one item at a time (messages are
 * never dropped: a busy session queues them and says where), the approvals its run waits on, and
 * the recorder that numbers, stores and fans out its events.
 */
export interface LiveSession {
  readonly id: string;
  /** The session's durable state (its mode, todos, plan), shared with its agent session. */
  readonly state: SessionState;
  readonly recorder: EventRecorder;
  readonly approvals: ApprovalBook;
  /** An item of work runs (here, or queued to a worker from here). */
  readonly busy: boolean;
  /** Work waiting behind the running item. */
  readonly queued: number;
  readonly mode: RunMode;
  /** Something runs: here, or a worker's queued turn that takes orders from here. */
  readonly working: boolean;
  /** Nothing runs, waits or watches: the hub may let it go. */
  readonly isIdle: boolean;
  /** Another process holds its run lease (a terminal, a worker, another gateway): a turn runs there. */
  readonly runsElsewhere: boolean;
  /** Where the session runs when another process runs it; it is then watched here and nothing else. */
  readonly runsAt: string | undefined;
  /** Where it runs when this gateway can only watch it (clients then offer no composer). */
  readonly watchedOnlyAt: string | undefined;
  /** Why a session another process runs takes no orders here (409). */
  readonly refusal: string;
  /** Messages steered in that no run has taken yet (they wait for the next one). */
  readonly unsteered: readonly string[];
  /** Runs a turn; position 0: it runs now. */
  send(input: MessageInput): Queued<TurnResult>;
  compact(): Queued<CompactResult>;
  /** Adds a message to the running turn at its next safe point; false when nothing runs. */
  steer(text: string): Promise<boolean>;
  /** Stops the running item (queued ones still run); false when nothing was running. */
  abort(): Promise<boolean>;
  /** Answers a call waiting for approval (or one a paused run left waiting). */
  answer(callId: string, answer: ApprovalAnswer): Promise<AnswerOutcome>;
  setMode(mode: RunMode): void;
  /** Starts the conversation over (nothing stored is deleted); refused while work is under way. */
  clear(): Promise<void>;
  /**
   * Replays the stored events after `since`, then sends every new one; returns the unsubscribe.
   * The replay waits whenever `ready` says the client has enough for now.
   */
  subscribe(subscriber: Subscriber, since?: number, ready?: Ready): () => void;
  /** Stored messages no event shows (see `unshownMessages`). */
  unshown(): Promise<UnshownMessages | undefined>;
  /** Told by the hub: who else holds the run lease now, and the worker's queued turn it runs. */
  leasedTo(holder: string | undefined, turn?: RunningTurn): void;
  /** Refuses what is queued, stops what runs, waits for it to wind down, writes what is buffered. */
  close(): Promise<void>;
}

/**
 * The live session for `id`: its turns relayed to workers when the gateway queues them there
 * (`gateway.turns: workers`), else run here.
 * @param writer for a session only the shared event log knows (no stored row here): who writes
 *   its events. It is then watched here and nothing else, each change refused with 409.
 */
export function openLiveSession(
  id: string,
  host: SessionHost,
  state: SessionState,
  writer?: string,
): LiveSession {
  return host.remote?.dispatches
    ? new RemoteSession(id, host, state, writer)
    : new LocalSession(id, host, state, writer);
}
