/**
 * One session's WebSocket, kept open: after the network drops it reconnects by itself (backing
 * off up to a few seconds) with `?since=` the last event it saw, so nothing is lost or shown twice.
 * A message sent while it is not open (still opening, or reconnecting) waits and goes once it is.
 */
export type Wire = { type: string; seq?: number } & Record<string, unknown>;
export type Link = 'connecting' | 'open' | 'offline';

export class SessionLink {
  private ws: WebSocket | undefined;
  private lastSeq = 0;
  private closed = false;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Messages sent while not open, in order. */
  private waiting: string[] = [];

  constructor(
    private readonly id: string,
    private readonly onEvent: (event: Wire) => void,
    private readonly onLink: (link: Link) => void,
  ) {
    this.open();
  }

  /** Sends an order (stop, approve, mode); false when not open, for it would not mean the same later. */
  send(message: object): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  /** Sends a message now, or once the link is open again: 'sent' or 'waiting'. */
  sendMessage(message: object): 'sent' | 'waiting' {
    if (this.send(message)) return 'sent';
    this.waiting.push(JSON.stringify(message));
    return 'waiting';
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.ws?.close();
  }

  private open(): void {
    this.onLink('connecting');
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(
      `${scheme}://${location.host}/ws/${encodeURIComponent(this.id)}?since=${this.lastSeq}`,
    );
    this.ws = ws;
    ws.onopen = () => {
      this.attempt = 0;
      for (const json of this.waiting.splice(0)) ws.send(json);
      this.onLink('open');
    };
    ws.onmessage = (message) => {
      let event: Wire;
      try {
        event = JSON.parse(String(message.data)) as Wire;
      } catch {
        return;
      }
      if (typeof event.seq === 'number') {
        if (event.seq <= this.lastSeq) return;
        this.lastSeq = event.seq;
      }
      this.onEvent(event);
    };
    ws.onclose = () => {
      if (this.closed || this.ws !== ws) return;
      this.onLink('offline');
      const delay = Math.min(4000, 250 * 2 ** this.attempt++);
      this.timer = setTimeout(() => this.open(), delay);
    };
  }
}
