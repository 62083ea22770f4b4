/**
 * The numbered log of the events sessions emitted over the gateway, behind one interface with two
 * backends: SQLite (`events.ts`, one machine) and PostgreSQL (`postgres/event-log.ts`, shared by
 * the gateways and workers of several machines). The log numbers each session's events itself,
 * inside the transaction that stores them, so two processes appending to one session never take
 * the same number or leave a gap, and a reader that sees `seq` N committed has everything below it.
 */

/** An event to store: its JSON object without `seq` (the log adds it first), and when it happened. */
export interface NewEvent {
  event: { type: string } & Record<string, unknown>;
  createdAt: number;
}

/** One stored event: its number within the session and its JSON exactly as clients receive it. */
export interface StoredEvent {
  seq: number;
  type: string;
  body: string;
}

export interface ActivityRow extends StoredEvent {
  sessionId: string;
  createdAt: number;
}

/**
 * A batch of a session's events was committed (`local`: by this log object), or the log may have
 * missed some while it could not listen (`resync`): readers then catch up from what they last saw.
 */
export type LogNotice =
  | { type: 'appended'; sessionId: string; from: number; to: number; local: boolean }
  | { type: 'resync' };

export interface EventLog {
  /**
   * Stores a batch of one session's events in one transaction, numbered after the session's last
   * event (all or nothing); returns them as stored, oldest first.
   */
  append(sessionId: string, events: readonly NewEvent[]): Promise<StoredEvent[]>;
  /** The events after `seq`, oldest first, at most `limit` of them. */
  since(sessionId: string, seq: number, limit?: number): Promise<StoredEvent[]>;
  /** The highest stored seq of a session, 0 when it has none. */
  lastSeq(sessionId: string): Promise<number>;
  /** Who appended a session's latest events (e.g. "hearth worker on gpu-box"); undefined when unknown. */
  writer(sessionId: string): Promise<string | undefined>;
  /** The latest tool calls and results over every session, newest first. */
  activity(limit: number): Promise<ActivityRow[]>;
  /** Removes a session's events (its session was deleted). */
  forget(sessionId: string): Promise<void>;
  /**
   * Tells `listener` of every batch committed once it hears `resync` (soon after this call, and
   * again after each break in listening): by any process sharing the database (PostgreSQL,
   * through LISTEN/NOTIFY), or by this log object alone (SQLite). Returns the stop.
   */
  watch(listener: (notice: LogNotice) => void): () => void;
  close(): Promise<void>;
}

/** The JSON a client receives: `seq` first, then the event's own fields. */
export function withSeq(seq: number, eventJson: string): string {
  return `{"seq":${seq},${eventJson.slice(1)}`;
}
