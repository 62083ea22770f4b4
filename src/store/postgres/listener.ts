/**
 * One dedicated connection that LISTENs on a channel for as long as the process wants it. A pool
 * cannot carry LISTEN (its connections are lent out and handed back), so this is a plain client,
 * opened again whenever it breaks (a server restart, a network failure). Notifications sent while
 * it was away are lost by PostgreSQL's design: each time it listens again it calls `onListening`,
 * and the reader then catches up from the log itself.
 */
import pg from 'pg';
import { type Clock, systemClock, type TimerHandle } from '../../util/clock.js';
import { applicationName } from './connection.js';

export interface ListenerOptions {
  url: string;
  channel: string;
  onNotify(payload: string): void;
  /** Listening (again): anything sent before now may have been missed. */
  onListening(): void;
  /** Why listening stopped, once per break (the caller may log it). */
  onProblem?(message: string): void;
  clock?: Clock;
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2_000;

export class PgListener {
  private client: pg.Client | undefined;
  private timer: TimerHandle | undefined;
  private retryMs = FIRST_RETRY_MS;
  private closed = false;
  private listening = false;
  private readonly clock: Clock;

  constructor(private readonly options: ListenerOptions) {
    this.clock = options.clock ?? systemClock;
    if (!/^[a-z_][a-z0-9_]*$/.test(options.channel))
      throw new Error(`Not a channel name: ${options.channel}`);
    void this.connect();
  }

  /** True while the connection listens (false between a break and the next LISTEN). */
  get isListening(): boolean {
    return this.listening;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.clock.clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.options.url,
      keepAlive: true,
      application_name: applicationName('listen'),
    });
    this.client = client;
    let broken = false;
    const lost = (why: string) => {
      if (broken) return;
      broken = true;
      void client.end().catch(() => undefined);
      if (this.closed || this.client !== client) return;
      this.client = undefined;
      // Said once per break, not once per failed try.
      if (this.listening)
        this.options.onProblem?.(`Stopped listening on ${this.options.channel} (${why}); trying again.`);
      this.listening = false;
      this.retry();
    };
    client.on('error', (err) => lost(err.message));
    client.on('end', () => lost('the connection closed'));
    client.on('notification', (message) => {
      if (message.channel === this.options.channel && message.payload) this.options.onNotify(message.payload);
    });
    try {
      await client.connect();
      await client.query(`listen ${this.options.channel}`);
    } catch (err) {
      lost((err as Error).message);
      return;
    }
    if (broken || this.closed) return;
    this.retryMs = FIRST_RETRY_MS;
    this.listening = true;
    this.options.onListening();
  }

  private retry(): void {
    const wait = this.retryMs;
    this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
    this.timer = this.clock.setTimeout(() => void this.connect(), wait);
    this.timer.unref();
  }
}
