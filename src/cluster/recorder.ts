import type { EventLog, NewEvent } from '../store/event-log.js';
import { type Clock, systemClock, type TimerHandle } from '../util/clock.js';
import { type Ready, SessionFeed, type Subscriber } from './session-feed.js';
import type { WireEvent } from './wire.js';

export type { Ready, Subscriber } from './session-feed.js';

/**
 * A failed write is tried again after a pause, the events kept in order meanwhile. (A PostgreSQL
 * log waits out a lost connection itself; what fails here is what waiting would not mend.)
 */
const RETRY_MS = 1_000;
const TRIES = 3;

/**
 * Streamed text recorded within this long of the last write waits for the next one, merged into
 * one event: a model's deltas cost one row and one frame per watcher every few milliseconds, not
 * one per token. The first delta after a pause goes at once (the next turn of the event loop), and
 * any other event (a tool call, `done`) takes the merged text with it at once, so order is kept.
 */
export const MERGE_MS = 5;

/** A merged event grows no longer than this (a fast stream of a long text still goes in pieces). */
const MERGE_MAX_CHARS = 64 * 1024;

/** The streamed events merged: consecutive ones of one type, with nothing but their text. */
const DELTAS = new Set(['text', 'reasoning']);

function isDelta(event: WireEvent): event is { type: string; text: string } {
  return DELTAS.has(event.type) && typeof event.text === 'string' && Object.keys(event).length === 2;
}

/**
 * Stores a session's events and hands them to its watchers. The log numbers them (`seq`) as it
 * stores them, so two processes recording one session never clash; an event goes to watchers
 * once stored, so a client never holds a number the store lacks. One write is under way at a
 * time: what is recorded meanwhile goes in the next, so a fast stream of text costs one
 * transaction per write, not per chunk, and a slow database (PostgreSQL on another machine)
 * batches more; consecutive deltas are merged into one event (`MERGE_MS`). Used by the gateway for the sessions it runs and by `hearth worker` for its tasks.
 */
export class EventRecorder {
  readonly feed: SessionFeed;
  private buffer: NewEvent[] = [];
  private writes: Promise<void> = Promise.resolve();
  /** A write is due: at the next turn of the event loop, or when the merge window ends. */
  private scheduled: 'soon' | 'later' | undefined;
  private timer: TimerHandle | undefined;
  private lastWrite = Number.NEGATIVE_INFINITY;
  private readonly clock: Clock;
  private readonly onProblem: ((message: string) => void) | undefined;

  constructor(
    readonly sessionId: string,
    log: EventLog,
    private readonly now: () => number,
    options: { clock?: Clock; onProblem?: (message: string) => void } = {},
  ) {
    this.feed = new SessionFeed(sessionId, log);
    this.clock = options.clock ?? systemClock;
    this.onProblem = options.onProblem;
  }

  /** The number of the latest event known to be stored (see `stored` for an exact one). */
  get lastSeq(): number {
    return this.feed.lastSeq;
  }

  get watchers(): number {
    return this.feed.size;
  }

  /**
   * Queues one event for the next write: a delta merged into the one before it when that is a
   * delta of its type not written yet (it keeps the first one's time).
   */
  record(event: WireEvent): void {
    const last = this.buffer.at(-1);
    if (
      last &&
      isDelta(event) &&
      isDelta(last.event) &&
      last.event.type === event.type &&
      last.event.text.length + event.text.length <= MERGE_MAX_CHARS
    ) {
      last.event = { type: event.type, text: last.event.text + event.text };
    } else {
      this.buffer.push({ event, createdAt: this.now() });
    }
    const since = this.clock.now() - this.lastWrite;
    this.schedule(!isDelta(event) || since >= MERGE_MS ? 0 : MERGE_MS - since);
  }

  /** Resolves once everything recorded before the call is stored and sent to watchers. */
  flush(): Promise<void> {
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.scheduled = undefined;
    this.writes = this.writes.then(() => this.write());
    return this.writes;
  }

  /**
   * Writes in `ms`, or sooner when a write is due sooner. At 0: after the events of this turn of
   * the event loop, so a burst goes in one write.
   */
  private schedule(ms: number): void {
    if (this.scheduled === 'soon' || (this.scheduled === 'later' && ms > 0)) return;
    this.clock.clearTimeout(this.timer);
    if (ms > 0) {
      this.scheduled = 'later';
      this.timer = this.clock.setTimeout(() => void this.flush(), ms);
      return;
    }
    this.scheduled = 'soon';
    this.timer = undefined;
    setImmediate(() => {
      if (this.scheduled === 'soon') void this.flush();
    });
  }

  /** The seq of the last event, once everything recorded so far is stored. */
  async stored(): Promise<number> {
    await this.flush();
    return this.feed.load();
  }

  /** Writes what is buffered; later records go on being numbered after it. */
  close(): Promise<void> {
    return this.flush();
  }

  /** Sends the stored events after `since` (none when it is undefined), then every new one. */
  subscribe(subscriber: Subscriber, since?: number, ready?: Ready): () => void {
    return this.feed.subscribe(subscriber, since, ready);
  }

  private async write(attempt = 1): Promise<void> {
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    this.lastWrite = this.clock.now();
    try {
      this.feed.offer(await this.feed.log.append(this.sessionId, batch));
    } catch (err) {
      const why = `Could not store ${batch.length} event(s) of session ${this.sessionId}: ${(err as Error).message}`;
      if (attempt >= TRIES) {
        this.onProblem?.(`${why}; they are not kept.`);
        return;
      }
      this.onProblem?.(`${why}; trying again.`);
      this.buffer = [...batch, ...this.buffer];
      await new Promise<void>((resolve) => this.clock.setTimeout(resolve, RETRY_MS));
      return this.write(attempt + 1);
    }
  }
}
