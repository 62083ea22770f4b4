import type { EventLog, NewEvent } from '../store/event-log.js';
import { type Clock, systemClock } from '../util/clock.js';
import { SessionFeed } from './session-feed.js';
import type { WireEvent } from './wire.js';

export type { Subscriber } from './session-feed.js';

/**
 * A failed write is tried again after a pause, the events kept in order meanwhile. (A PostgreSQL
 * log waits out a lost connection itself; what fails here is what waiting would not mend.)
 */
const RETRY_MS = 1_000;
const TRIES = 3;

/**
 * Stores a session's events and hands them to its watchers. The log numbers them (`seq`) as it
 * stores them, so two processes recording one session never clash; an event goes to watchers
 * once stored, so a client never holds a number the store lacks. One write is under way at a
 * time: what is recorded meanwhile goes in the next, so a fast stream of text costs one
 * transaction per write, not per chunk, and a slow database (PostgreSQL on another machine)
 * batches more. Used by the gateway for the sessions it runs and by `hearth worker` for its tasks.
 */
export class EventRecorder {
  readonly feed: SessionFeed;
  private buffer: NewEvent[] = [];
  private writes: Promise<void> = Promise.resolve();
  private scheduled = false;
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

  /** Queues one event for the next write (started at once when none is under way). */
  record(event: WireEvent): void {
    this.buffer.push({ event, createdAt: this.now() });
    if (this.scheduled) return;
    this.scheduled = true;
    // After the events of this turn of the event loop, so a burst goes in one write.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** Resolves once everything recorded before the call is stored and sent to watchers. */
  flush(): Promise<void> {
    this.writes = this.writes.then(() => this.write());
    return this.writes;
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
  subscribe(subscriber: (json: string, seq: number) => void, since?: number): () => void {
    return this.feed.subscribe(subscriber, since);
  }

  private async write(attempt = 1): Promise<void> {
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
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
