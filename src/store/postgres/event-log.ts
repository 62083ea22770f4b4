/**
 * The event log in the PostgreSQL database several machines share. An append is one statement:
 * it moves the session's head row (which locks it until commit, so concurrent appends to one
 * session take consecutive numbers in commit order), inserts the batch numbered after it, and
 * queues a NOTIFY that carries only the session and the seq range (payloads are capped at 8000
 * bytes; readers fetch the rows). One LISTEN connection per log object, opened on the first
 * `watch`, tells watchers; after it listens again they catch up from the rows.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../util/clock.js';
import { sleep, systemClock } from '../../util/clock.js';
import type { ActivityRow, EventLog, LogNotice, NewEvent, StoredEvent } from '../event-log.js';
import { isConnectionError, type PgPool } from './connection.js';
import { PgListener } from './listener.js';

const CHANNEL = 'hearth_events';
const MAX_RETRY_MS = 2_000;

const APPEND = `
with head as (
  insert into hearth_event_heads as h (session_id, last_seq, writer) values ($1, $2, $3)
  on conflict (session_id) do update
    set last_seq = h.last_seq + excluded.last_seq, writer = excluded.writer, updated_at = now()
  returning last_seq
), stored as (
  insert into hearth_events (session_id, seq, type, body, created_at, batch)
  select $1, head.last_seq - $2 + e.n, e.type,
         '{"seq":' || (head.last_seq - $2 + e.n) || ',' || substr(e.body, 2), e.at, $7
  from head, unnest($4::text[], $5::text[], $6::bigint[]) with ordinality as e(type, body, at, n)
  returning seq, type, body
), told as (
  select pg_notify('${CHANNEL}', $1 || ' ' || (last_seq - $2 + 1) || ' ' || last_seq || ' ' || $8) from head
)
select seq, type, body from stored, told order by seq`;

export interface PostgresEventLogOptions {
  /** Who appends, as readers see it ("hearth worker on gpu-box"). */
  writer: string;
  /** Told when listening stops or an append waits for the database. */
  onProblem?: (message: string) => void;
  clock?: Clock;
}

export class PostgresEventLog implements EventLog {
  /** Names this object in its notifications, so it knows its own appends when they come back. */
  private readonly origin = randomUUID().slice(0, 12);
  private readonly listeners = new Set<(notice: LogNotice) => void>();
  private listener: PgListener | undefined;
  private closed = false;
  private readonly stopping = new AbortController();
  private readonly clock: Clock;

  /** Over the Storage's pool (schema up to date); the pool stays the Storage's. */
  constructor(
    private readonly pool: PgPool,
    private readonly url: string,
    private readonly options: PostgresEventLogOptions,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Waits out a lost connection (a server restart) rather than failing: the caller's events are
   * kept in order behind it. A reply lost after the commit is found by the batch's name, so it is
   * never written twice. Rejects once the log is closed.
   */
  async append(sessionId: string, events: readonly NewEvent[]): Promise<StoredEvent[]> {
    if (events.length === 0) return [];
    const batch = randomUUID();
    const values = [
      sessionId,
      events.length,
      this.options.writer,
      events.map((e) => e.event.type),
      events.map((e) => JSON.stringify(e.event)),
      events.map((e) => e.createdAt),
      batch,
      this.origin,
    ];
    let wait = 100;
    for (let attempt = 1; ; attempt++) {
      try {
        if (attempt > 1) {
          const { rows } = await this.pool.query<StoredEvent>(
            'select seq, type, body from hearth_events where session_id = $1 and batch = $2 order by seq',
            [sessionId, batch],
          );
          if (rows.length > 0) return rows;
        }
        return (await this.pool.query<StoredEvent>(APPEND, values)).rows;
      } catch (err) {
        if (this.closed || !isConnectionError(err)) throw err;
        if (attempt === 1)
          this.options.onProblem?.(`Events wait for the database: ${(err as Error).message}`);
        await sleep(wait, this.stopping.signal, this.clock);
        wait = Math.min(MAX_RETRY_MS, wait * 2);
      }
    }
  }

  async since(sessionId: string, seq: number, limit = 1_000_000): Promise<StoredEvent[]> {
    const { rows } = await this.pool.query<StoredEvent>(
      'select seq, type, body from hearth_events where session_id = $1 and seq > $2 order by seq limit $3',
      [sessionId, seq, limit],
    );
    return rows;
  }

  async lastSeq(sessionId: string): Promise<number> {
    return (await this.head(sessionId))?.last_seq ?? 0;
  }

  async writer(sessionId: string): Promise<string | undefined> {
    return (await this.head(sessionId))?.writer;
  }

  async activity(limit: number): Promise<ActivityRow[]> {
    const { rows } = await this.pool.query<ActivityRow & { createdAt: string }>(
      `select session_id as "sessionId", seq, type, body, created_at as "createdAt" from hearth_events
       where type in ('tool_call', 'tool_result') order by created_at desc, seq desc limit $1`,
      [limit],
    );
    return rows.map((row) => ({ ...row, createdAt: Number(row.createdAt) }));
  }

  async forget(sessionId: string): Promise<void> {
    await this.pool.query(
      'with gone as (delete from hearth_events where session_id = $1) delete from hearth_event_heads where session_id = $1',
      [sessionId],
    );
  }

  watch(listener: (notice: LogNotice) => void): () => void {
    this.listeners.add(listener);
    if (this.listener?.isListening) queueMicrotask(() => listener({ type: 'resync' }));
    this.listener ??= new PgListener({
      url: this.url,
      channel: CHANNEL,
      clock: this.clock,
      onNotify: (payload) => {
        const notice = this.parse(payload);
        if (notice) this.tell(notice);
      },
      onListening: () => this.tell({ type: 'resync' }),
      onProblem: this.options.onProblem,
    });
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopping.abort();
    this.listeners.clear();
    await this.listener?.close();
  }

  private async head(sessionId: string) {
    const { rows } = await this.pool.query<{ last_seq: number; writer: string }>(
      'select last_seq, writer from hearth_event_heads where session_id = $1',
      [sessionId],
    );
    return rows[0];
  }

  private tell(notice: LogNotice): void {
    for (const listener of this.listeners) listener(notice);
  }

  /** "<session> <from> <to> <origin>"; the session id is all before the last three words. */
  private parse(payload: string): LogNotice | undefined {
    const words = payload.split(' ');
    if (words.length < 4) return undefined;
    const [from, to, origin] = words.slice(-3);
    return {
      type: 'appended',
      sessionId: words.slice(0, -3).join(' '),
      from: Number(from),
      to: Number(to),
      local: origin === this.origin,
    };
  }
}
