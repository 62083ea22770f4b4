import type { EventLog, NewEvent } from '../store/events.js';
import type { SessionState } from '../tools/types.js';
import type { WireEvent } from './wire.js';

/** A client watching a session: gets each event's JSON (which holds its `seq`) in order. */
export type Subscriber = (json: string, seq: number) => void;

/**
 * Events after which the buffer is written: where a crash would lose something a person acted
 * on, or a run ends. Streamed text waits for the next of these (or a full buffer), so a step costs
 * about one transaction however many chunks it streamed.
 */
const FLUSH_AFTER = new Set([
  'tool_result',
  'approval_request',
  'approval_resolved',
  'done',
  'error',
  'user_message',
  'mode_changed',
  'cleared',
  'compaction',
]);
const MAX_BUFFERED = 256;

/**
 * Numbers are reserved in blocks kept in the session state, so that after a crash (which loses
 * the unwritten buffer) numbering resumes above anything a client may already have seen.
 */
const SEQ_BLOCK = 1024;
const RESERVED_KEY = 'gateway.seq_reserved';

/**
 * Numbers a session's events, stores them and hands them to its watchers. Each event is turned
 * into JSON once; the same string goes to every client and into the store. A watcher that joins
 * with `since` first gets the stored events after it, then the live ones: none lost, none twice
 * (joining and recording both run synchronously, so nothing slips in between).
 */
export class EventRecorder {
  private seq: number;
  private reserved: number;
  private buffer: NewEvent[] = [];
  private readonly subscribers = new Set<Subscriber>();

  constructor(
    private readonly sessionId: string,
    private readonly log: EventLog,
    private readonly state: SessionState,
    private readonly now: () => number,
  ) {
    const reserved = state.get(RESERVED_KEY);
    this.reserved = typeof reserved === 'number' ? reserved : 0;
    this.seq = Math.max(log.lastSeq(sessionId), this.reserved);
  }

  /** The number of the latest event. */
  get lastSeq(): number {
    return this.seq;
  }

  get watchers(): number {
    return this.subscribers.size;
  }

  /** Numbers, stores (soon) and sends one event; returns its JSON. */
  record(event: WireEvent): string {
    const seq = ++this.seq;
    if (seq > this.reserved) {
      this.reserved = seq + SEQ_BLOCK;
      this.state.set(RESERVED_KEY, this.reserved);
    }
    const json = JSON.stringify({ seq, ...event });
    this.buffer.push({ sessionId: this.sessionId, seq, type: event.type, body: json, createdAt: this.now() });
    if (FLUSH_AFTER.has(event.type) || this.buffer.length >= MAX_BUFFERED) this.flush();
    for (const subscriber of this.subscribers) subscriber(json, seq);
    return json;
  }

  /** Writes the buffered events in one transaction. */
  flush(): void {
    if (this.buffer.length === 0) return;
    const rows = this.buffer;
    this.buffer = [];
    this.log.append(rows);
  }

  /** Writes what is buffered and keeps the exact last number, so numbering goes on without a gap. */
  close(): void {
    this.flush();
    this.reserved = this.seq;
    this.state.set(RESERVED_KEY, this.seq);
  }

  /**
   * Sends the stored events after `since` (none when it is undefined), then every new one.
   * Returns the function that stops it.
   */
  subscribe(subscriber: Subscriber, since?: number): () => void {
    if (since !== undefined && since < this.seq) {
      this.flush();
      for (const row of this.log.since(this.sessionId, since)) subscriber(row.body, row.seq);
    }
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }
}
