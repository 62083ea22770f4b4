import {
  type ActivityRow,
  type EventLog,
  type LogNotice,
  type NewEvent,
  type StoredEvent,
  withSeq,
} from '../event-log.js';
import type { Db } from './database.js';

/**
 * The event log in the SQLite session database. A batch is numbered and written in one IMMEDIATE
 * transaction (better-sqlite3 runs it synchronously), so processes sharing the file never take the
 * same number. `watch` hears only this object's own appends: on one machine the process that runs a
 * session is the one its clients watch.
 */
export class SqliteEventLog implements EventLog {
  private readonly insert;
  private readonly selectSince;
  private readonly selectLast;
  private readonly selectActivity;
  private readonly remove;
  private readonly appendAll: (sessionId: string, rows: readonly NewEvent[]) => StoredEvent[];
  private readonly listeners = new Set<(notice: LogNotice) => void>();

  constructor(db: Db) {
    this.insert = db.prepare(
      'INSERT INTO events (session_id, seq, type, body, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    this.selectSince = db.prepare(
      'SELECT seq, type, body FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    );
    this.selectLast = db.prepare('SELECT MAX(seq) AS seq FROM events WHERE session_id = ?');
    this.selectActivity = db.prepare(
      `SELECT session_id AS sessionId, seq, type, body, created_at AS createdAt FROM events
       WHERE type IN ('tool_call', 'tool_result') ORDER BY created_at DESC, seq DESC LIMIT ?`,
    );
    this.remove = db.prepare('DELETE FROM events WHERE session_id = ?');
    const numbered = db.transaction((sessionId: string, rows: readonly NewEvent[]) => {
      let seq = this.last(sessionId);
      return rows.map(({ event, createdAt }) => {
        seq++;
        const body = withSeq(seq, JSON.stringify(event));
        this.insert.run(sessionId, seq, event.type, body, createdAt);
        return { seq, type: event.type, body };
      });
    });
    this.appendAll = (sessionId, rows) => numbered.immediate(sessionId, rows);
  }

  async append(sessionId: string, events: readonly NewEvent[]): Promise<StoredEvent[]> {
    if (events.length === 0) return [];
    const stored = this.appendAll(sessionId, events);
    const notice: LogNotice = {
      type: 'appended',
      sessionId,
      from: stored[0]!.seq,
      to: stored.at(-1)!.seq,
      local: true,
    };
    for (const listener of this.listeners) listener(notice);
    return stored;
  }

  async since(sessionId: string, seq: number, limit = 1_000_000): Promise<StoredEvent[]> {
    return this.selectSince.all(sessionId, seq, limit) as StoredEvent[];
  }

  async lastSeq(sessionId: string): Promise<number> {
    return this.last(sessionId);
  }

  async writer(): Promise<string | undefined> {
    return undefined;
  }

  async activity(limit: number): Promise<ActivityRow[]> {
    return this.selectActivity.all(limit) as ActivityRow[];
  }

  async forget(sessionId: string): Promise<void> {
    this.remove.run(sessionId);
  }

  watch(listener: (notice: LogNotice) => void): () => void {
    this.listeners.add(listener);
    queueMicrotask(() => listener({ type: 'resync' }));
    return () => this.listeners.delete(listener);
  }

  /** The database belongs to whoever opened it. */
  async close(): Promise<void> {
    this.listeners.clear();
  }

  private last(sessionId: string): number {
    return (this.selectLast.get(sessionId) as { seq: number | null }).seq ?? 0;
  }
}
