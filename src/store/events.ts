import type { Db } from './database.js';

/** One stored event: its number within the session and its JSON exactly as clients received it. */
export interface StoredEvent {
  seq: number;
  body: string;
}

export interface NewEvent extends StoredEvent {
  sessionId: string;
  type: string;
  createdAt: number;
}

export interface ActivityRow extends StoredEvent {
  sessionId: string;
  createdAt: number;
}

/**
 * The events a session emitted over the gateway, numbered per session (`seq`), kept so that a
 * client that reconnects receives what it missed. Writers hand over batches: one transaction per
 * batch keeps the cost per event to an insert into an open transaction.
 */
export class EventLog {
  private readonly insert;
  private readonly selectSince;
  private readonly selectLast;
  private readonly selectActivity;
  private readonly appendAll: (rows: readonly NewEvent[]) => void;

  constructor(db: Db) {
    this.insert = db.prepare(
      'INSERT INTO events (session_id, seq, type, body, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    this.selectSince = db.prepare(
      'SELECT seq, body FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    );
    this.selectLast = db.prepare('SELECT MAX(seq) AS seq FROM events WHERE session_id = ?');
    this.selectActivity = db.prepare(
      `SELECT session_id AS sessionId, seq, body, created_at AS createdAt FROM events
       WHERE type IN ('tool_call', 'tool_result') ORDER BY created_at DESC, seq DESC LIMIT ?`,
    );
    this.appendAll = db.transaction((rows: readonly NewEvent[]) => {
      for (const row of rows) this.insert.run(row.sessionId, row.seq, row.type, row.body, row.createdAt);
    });
  }

  /** Writes a batch in one transaction; all or nothing. */
  append(rows: readonly NewEvent[]): void {
    if (rows.length > 0) this.appendAll(rows);
  }

  /** The events after `seq`, oldest first, at most `limit` of them. */
  since(sessionId: string, seq: number, limit = 1_000_000): StoredEvent[] {
    return this.selectSince.all(sessionId, seq, limit) as StoredEvent[];
  }

  /** The highest stored seq of a session, 0 when it has none. */
  lastSeq(sessionId: string): number {
    return (this.selectLast.get(sessionId) as { seq: number | null }).seq ?? 0;
  }

  /** The latest tool calls and results over every session, newest first. */
  activity(limit: number): ActivityRow[] {
    return this.selectActivity.all(limit) as ActivityRow[];
  }
}
