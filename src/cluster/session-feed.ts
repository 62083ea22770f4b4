import type { EventLog, StoredEvent } from '../store/event-log.js';

/** A client watching a session: gets each event's JSON (which holds its `seq`) in order. */
export type Subscriber = (json: string, seq: number) => void;

/**
 * Says whether a watcher's client can take more now: undefined when it can, else a promise that
 * resolves once it can (its socket drained). A catch-up waits on it between events, so replaying
 * a long log to a client holds no more than the socket's own buffer in memory.
 */
export type Ready = () => Promise<void> | undefined;

/** Rows read per query while a watcher catches up. */
const PAGE = 500;

/**
 * The clients watching one session, each handed every stored event once and in order, whoever
 * wrote it. Events this process stored arrive through `offer` (and go out without a read); events
 * other processes stored are announced by `notice`, and each watcher then reads what it lacks from
 * the log. A watcher remembers the last seq it sent, so a replay that overlaps live events, or a
 * notice heard twice, never sends anything twice.
 */
export class SessionFeed {
  private readonly watchers = new Set<Watcher>();
  /** The highest seq known to be stored; undefined until learned. */
  private known: number | undefined;

  constructor(
    readonly sessionId: string,
    readonly log: EventLog,
  ) {}

  get size(): number {
    return this.watchers.size;
  }

  /** The last seq known to be stored (0 until something is learned; `load` asks the log). */
  get lastSeq(): number {
    return this.known ?? 0;
  }

  /** The last stored seq, as the log has it now (another process may have stored more). */
  async load(): Promise<number> {
    const stored = await this.log.lastSeq(this.sessionId);
    this.known = Math.max(this.known ?? 0, stored);
    return this.known;
  }

  /** Events this process has just stored, oldest first, with no gap between them. */
  offer(rows: readonly StoredEvent[]): void {
    const last = rows.at(-1);
    if (!last) return;
    this.known = Math.max(this.known ?? 0, last.seq);
    for (const watcher of this.watchers) watcher.offer(rows);
  }

  /** Events up to `to` were stored elsewhere; no `to`: some may have been (the log listens again). */
  notice(to?: number): void {
    if (to !== undefined && this.known !== undefined) this.known = Math.max(this.known, to);
    for (const watcher of this.watchers) void watcher.catchUp();
  }

  /**
   * Resolves once every watcher has been sent everything stored now, whoever stored it (a turn a
   * worker ran ends only after its watchers here have its last event).
   */
  async sync(): Promise<void> {
    await this.load();
    await Promise.all([...this.watchers].map((watcher) => watcher.catchUp()));
  }

  /**
   * Sends the stored events after `since`, then every new one; with no `since`, only what is
   * stored from now on. Returns the function that stops it.
   */
  subscribe(send: Subscriber, since?: number, ready?: Ready): () => void {
    const watcher = new Watcher(this, send, since ?? this.known, ready);
    this.watchers.add(watcher);
    void watcher.catchUp();
    return () => {
      watcher.stopped = true;
      this.watchers.delete(watcher);
    };
  }
}

class Watcher {
  stopped = false;
  private reading: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly feed: SessionFeed,
    private readonly send: Subscriber,
    /** The last seq sent; undefined until the feed has learned where "now" is. */
    private sent: number | undefined,
    private readonly ready?: Ready,
  ) {}

  offer(rows: readonly StoredEvent[]): void {
    if (this.stopped) return;
    if (!this.reading && this.sent !== undefined && rows[0]!.seq <= this.sent + 1) this.deliver(rows);
    else void this.catchUp();
  }

  /**
   * Reads from the log until it has sent everything stored; one reader at a time. Resolves when
   * that reader is done, having read again for every call made meanwhile.
   */
  catchUp(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = this.read().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async read(): Promise<void> {
    try {
      this.sent ??= await this.feed.load();
      do {
        this.again = false;
        for (;;) {
          const rows = await this.feed.log.since(this.feed.sessionId, this.sent, PAGE);
          const waiting = this.paced(rows);
          if (waiting) await waiting;
          if (rows.length < PAGE || this.stopped) break;
        }
      } while (this.again && !this.stopped);
    } catch {
      // The log cannot be read now (the database restarts): the next notice, or the resync once
      // the log listens again, starts over from the last seq sent.
    }
  }

  /**
   * `deliver`, waiting whenever the client says it has enough for now; undefined when it sent
   * everything without waiting (no extra turn of the event loop for a client keeping up).
   */
  private paced(rows: readonly StoredEvent[]): Promise<void> | undefined {
    for (const [i, row] of rows.entries()) {
      const wait = this.ready?.();
      if (wait) return wait.then(() => this.paced(rows.slice(i)));
      this.deliver([row]);
    }
    return undefined;
  }

  private deliver(rows: readonly StoredEvent[]): void {
    for (const row of rows) {
      if (this.stopped) return;
      if (this.sent !== undefined && row.seq <= this.sent) continue;
      this.sent = row.seq;
      this.send(row.body, row.seq);
    }
  }
}
