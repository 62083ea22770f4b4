import { WebSocket } from 'ws';
import type { WireEvent } from '../../cluster/wire.js';
import type { GatewayAddress } from './gateway-client.js';

/** What the gateway says first on every connection. */
export interface Connected {
  exists: boolean;
  last_seq: number;
  running: boolean;
  queued: number;
  waiting: string[];
  /** Stored messages no event shows, sent after the replay as a `stored_messages` event. */
  unshown?: { from: number; to: number };
}

export interface StreamHandlers {
  /** Each session event once, in seq order, and the replies without a seq (`queued`, `error`). */
  event(event: WireEvent & { seq?: number }): void;
  /** Every (re)connection, after which the events it replays come. */
  connected(hello: Connected, again: boolean): void;
  /** The connection dropped; it is being made again. */
  lost(why: string): void;
  /** It cannot go on (the token was refused and no new one is to be found). */
  failed(why: string): void;
}

/** Waits between reconnection attempts: quick at first, then every two seconds. */
const BACKOFF_MS = [100, 250, 500, 1000, 2000];

/**
 * One session's events over the gateway's WebSocket, kept going by itself: a dropped connection
 * (the network, a restarted gateway) is made again with `?since=` the last seq shown, so every
 * event arrives once. Each attempt asks `address()` anew, since a restarted gateway may listen on
 * another port with another token. Events at or below the last seq (a replay that overlaps) are
 * dropped here, whatever the gateway sends.
 */
export class SessionStream {
  private ws: WebSocket | undefined;
  private lastSeq: number;
  private attempts = 0;
  private closed = false;
  private everConnected = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly session: string,
    private readonly address: () => Promise<GatewayAddress>,
    private readonly handlers: StreamHandlers,
    since: number,
  ) {
    this.lastSeq = since;
  }

  get seq(): number {
    return this.lastSeq;
  }

  start(): void {
    void this.connect();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.ws?.close(1000);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    let address: GatewayAddress;
    try {
      address = await this.address();
    } catch (err) {
      // No gateway right now (stopped, restarting): keep trying, as after a dropped connection.
      return this.retry((err as Error).message);
    }
    const url = `${address.url.replace(/^http/, 'ws')}/ws/${encodeURIComponent(this.session)}?since=${this.lastSeq}`;
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${address.token}` } });
    this.ws = ws;
    let opened = false;
    ws.on('open', () => {
      opened = true;
    });
    ws.on('message', (data) => this.receive(String(data)));
    ws.on('unexpected-response', (_request, response) => {
      const status = response.statusCode ?? 0;
      response.resume();
      ws.terminate();
      if (status === 401 && this.everConnected === false) {
        this.closed = true;
        this.handlers.failed(`the gateway refused the token (${status})`);
      }
    });
    ws.on('error', () => {
      // 'close' follows and decides.
    });
    ws.on('close', (code, reason) => {
      if (this.ws !== ws || this.closed) return;
      this.ws = undefined;
      const why = opened
        ? `the connection closed${reason.length ? `: ${reason.toString()}` : ` (${code})`}`
        : 'the gateway did not answer';
      this.retry(why);
    });
  }

  private retry(why: string): void {
    if (this.closed) return;
    if (this.attempts === 0 && this.everConnected) this.handlers.lost(why);
    const delay = BACKOFF_MS[Math.min(this.attempts, BACKOFF_MS.length - 1)]!;
    this.attempts++;
    this.timer = setTimeout(() => void this.connect(), delay);
  }

  private receive(text: string): void {
    let event: WireEvent & { seq?: number };
    try {
      event = JSON.parse(text) as WireEvent & { seq?: number };
    } catch {
      return;
    }
    if (typeof event !== 'object' || event === null || typeof event.type !== 'string') return;
    if (event.type === 'connected') {
      const hello = event as unknown as Connected;
      const again = this.everConnected;
      this.everConnected = true;
      this.attempts = 0;
      // The gateway's numbering is behind what was shown (another database, a crash that lost
      // the unwritten tail): carry on from its number rather than dropping everything new.
      if (typeof hello.last_seq === 'number' && hello.last_seq < this.lastSeq) this.lastSeq = hello.last_seq;
      this.handlers.connected(hello, again);
      return;
    }
    if (typeof event.seq === 'number') {
      if (event.seq <= this.lastSeq) return;
      this.lastSeq = event.seq;
    }
    this.handlers.event(event);
  }
}
