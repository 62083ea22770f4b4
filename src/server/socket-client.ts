import type { Socket } from 'node:net';
import type { WSContext } from 'hono/ws';
import type { WebSocket } from 'ws';
import { z } from 'zod';
import type { SessionHub } from './hub.js';
import type { LiveSession } from './live-session.js';
import { describeError } from './problem.js';
import { ImageInput, MAX_IMAGES } from './schemas.js';

/**
 * What a WebSocket client may send: the agent_computer protocol (`message`, `set_mode`, `clear`,
 * `ping`, and its later `approval_response`) plus `approve`, `abort` and `steer`.
 */
const clientMessage = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('message'),
    content: z.string().min(1),
    images: z.array(ImageInput).max(MAX_IMAGES).optional(),
    mode: z.enum(['bounded', 'deep_work']).optional(),
    model: z.string().min(1).optional(),
  }),
  z.object({ type: z.literal('steer'), content: z.string().min(1) }),
  z.object({ type: z.literal('set_mode'), mode: z.enum(['bounded', 'deep_work']) }),
  z.object({ type: z.literal('clear') }),
  z.object({ type: z.literal('ping') }),
  z.object({ type: z.literal('abort') }),
  z.object({
    type: z.enum(['approve', 'approval_response']),
    tool_call_id: z.string().min(1),
    decision: z.enum(['once', 'always', 'deny']).optional(),
    /** agent_computer's form: true is "once", false is "deny". */
    approved: z.boolean().optional(),
    reason: z.string().optional(),
  }),
]);
type ClientMessage = z.infer<typeof clientMessage>;

/**
 * How far a client may fall behind. A socket whose reader stops (a stalled tab, a client that
 * never reads) would otherwise keep every event in memory: past `maxBehindBytes` waiting to be
 * written it is closed with `BEHIND_CLOSE` and its reason, and reconnects with `?since=` to get
 * what it missed, none twice. A reader too stalled to take even the close frame is cut off
 * `closeGraceMs` later, so what it held is let go.
 */
export interface SocketLimits {
  maxBehindBytes: number;
  closeGraceMs: number;
}

export const DEFAULT_SOCKET_LIMITS: SocketLimits = { maxBehindBytes: 4 * 1024 * 1024, closeGraceMs: 10_000 };

/** "Try again later" (RFC 6455 §7.4.1): the client reconnects and resumes with `since`. */
export const BEHIND_CLOSE = {
  code: 1013,
  reason: 'Too far behind; reconnect with ?since=<last seq> to continue.',
} as const;

/**
 * One WebSocket watching (and driving) one session. It may connect before the session exists:
 * the first message creates it. Replies meant for this client alone (`queued`, `pong`, `error`)
 * carry no seq; the session's events do.
 */
export class SessionSocket {
  private stop: (() => void) | undefined;
  private stopped = false;
  /** Subscribed to the session's events (`stop` may instead be a wait for its creation). */
  private watching = false;
  /** Events that came before the `connected` greeting was sent. */
  private early: Array<[json: string, seq: number]> | undefined;
  /** Resolves once the greeting is sent: a replay waits for it rather than pile up in `early`. */
  private greet: () => void = () => {};
  private readonly greeted = new Promise<void>((resolve) => {
    this.greet = resolve;
  });
  /**
   * Stored messages no event shows yet (turns run in the terminal since the gateway's last), as the
   * `stored_messages` event sent once the replay reaches `after`: they came after those events.
   */
  private tail: { after: number; json: string } | undefined;
  /** The socket's writes wait for the end of this tick (`corkForTick`). */
  private corked = false;
  /** Messages are handled one after another, in the order they came. */
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly ws: WSContext,
    private readonly hub: SessionHub,
    private readonly id: string,
    private readonly since: number | undefined,
    private readonly limits: SocketLimits = DEFAULT_SOCKET_LIMITS,
  ) {}

  /** Says hello; a session another process runs (a worker elsewhere) is watched from the shared log. */
  open(): void {
    this.chain = this.chain.then(() => this.hello()).catch((err: unknown) => this.fail(err));
  }

  private async hello(): Promise<void> {
    const live = await this.hub.watchable(this.id);
    // Watched in the step it is found (the hub would let an unwatched session go); what comes
    // before the greeting waits for it.
    const early: Array<[string, number]> = [];
    if (live) this.watch(live, this.since, early);
    // Not there yet: watched from its first event once another client creates it.
    else this.stop = this.hub.whenCreated(this.id, () => this.adopt());
    const lastSeq = live ? await live.recorder.stored() : 0;
    // Read before this client's first message is handled: a turn it starts marks the same messages
    // (clients take each stored message once, by its index). A turn under way has its own events.
    const unshown = live && this.since !== undefined && !live.working ? await live.unshown() : undefined;
    if (unshown)
      this.tail = { after: lastSeq, json: JSON.stringify({ type: 'stored_messages', ...unshown }) };
    this.reply({
      type: 'connected',
      session_id: this.id,
      exists: live !== undefined,
      last_seq: lastSeq,
      // Said here so a client can wait for it: it follows the replay as a `stored_messages` event.
      ...(unshown ? { unshown } : {}),
      // A turn a terminal or another process runs counts: the lease it holds lasts that turn.
      running: live ? live.working || live.runsElsewhere : false,
      queued: live?.queued ?? 0,
      mode: live?.mode ?? 'bounded',
      waiting: live?.approvals.waiting ?? [],
      ...(live?.watchedOnlyAt ? { runs_at: live.watchedOnlyAt } : {}),
    });
    const waiting = early.splice(0);
    this.early = undefined;
    this.greet();
    if (this.tail && (this.since ?? 0) >= this.tail.after) this.sendTail();
    for (const [json, seq] of waiting) this.deliver(json, seq);
  }

  /** Starts watching a session created after this client connected: every event, from the first. */
  private adopt(): void {
    this.chain = this.chain
      .then(async () => {
        const live = await this.hub.session(this.id);
        // This client's own first message may have created it and be watching it already.
        if (this.stopped || this.watching) return;
        this.watch(live, 0);
      })
      .catch((err: unknown) => this.fail(err));
  }

  receive(text: string): void {
    this.chain = this.chain.then(() => this.handle(text)).catch((err: unknown) => this.fail(err));
  }

  close(): void {
    this.stopped = true;
    this.greet();
    this.stop?.();
    this.stop = undefined;
  }

  private async handle(text: string): Promise<void> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return this.error('Send JSON, e.g. {"type": "message", "content": "..."}.');
    }
    const result = clientMessage.safeParse(parsed);
    if (!result.success) {
      const type = (parsed as { type?: unknown } | null)?.type;
      return this.error(
        `Not understood: ${result.error.issues.map((i) => `${i.path.join('.') || 'message'}: ${i.message}`).join('; ')}` +
          (typeof type === 'string' ? ` (type "${type}")` : ''),
      );
    }
    await this.act(result.data);
  }

  private async act(message: ClientMessage): Promise<void> {
    switch (message.type) {
      case 'ping':
        return this.reply({ type: 'pong' });
      case 'message': {
        await this.hub.ensure(this.id);
        await this.hub.refuseBlind(this.id, message.images, message.model);
        await this.hub.refuseOversized(this.id, message.content, message.model);
        const live = await this.session();
        const { position, result } = live.send({
          text: message.content,
          images: message.images,
          mode: message.mode,
          model: message.model,
        });
        // Failures reach every watcher as an `error` event; nothing more to say here.
        result.catch(() => undefined);
        if (position > 0) this.reply({ type: 'queued', position });
        return;
      }
      case 'steer': {
        if (!(await (await this.stored())?.steer(message.content))) {
          return this.error('Nothing is running to steer; send it as a message.');
        }
        return;
      }
      case 'set_mode':
        return (await this.session()).setMode(message.mode);
      case 'clear':
        return (await this.session()).clear();
      case 'abort':
        if (!(await (await this.stored())?.abort())) return this.error('Nothing is running.');
        return;
      case 'approve':
      case 'approval_response': {
        const decision = message.decision ?? (message.approved === false ? 'deny' : 'once');
        const outcome = await (await this.session()).answer(message.tool_call_id, {
          decision,
          ...(message.reason ? { reason: message.reason } : {}),
        });
        if (outcome === 'unknown') return this.error(`No call ${message.tool_call_id} waits for approval.`);
        if (outcome === 'already') return this.error(`Call ${message.tool_call_id} was answered already.`);
        return;
      }
    }
  }

  /**
   * The session, created at the first message when it does not exist yet; watched from then on
   * (watched in the same step it is taken, so the hub cannot let it go as idle in between).
   */
  /** The session when it is stored (told who runs it now), without creating it. */
  private async stored(): Promise<LiveSession | undefined> {
    return (await this.hub.has(this.id)) ? this.hub.session(this.id) : undefined;
  }

  private async session(): Promise<LiveSession> {
    await this.hub.ensure(this.id);
    const live = await this.hub.session(this.id);
    if (!this.watching) this.watch(live, 0);
    return live;
  }

  private watch(live: LiveSession, since: number | undefined, early?: Array<[string, number]>): void {
    this.stop?.();
    this.watching = true;
    this.early = early;
    this.stop = live.subscribe(
      (json, seq) => {
        if (this.early) this.early.push([json, seq]);
        else this.deliver(json, seq);
      },
      since,
      this.ready,
    );
  }

  private deliver(json: string, seq: number): void {
    this.send(json);
    if (this.tail && seq >= this.tail.after) this.sendTail();
  }

  private sendTail(): void {
    const json = this.tail!.json;
    this.tail = undefined;
    this.send(json);
  }

  /** Undefined while the socket takes more; else resolves once it has drained (or closed). */
  private readonly ready = (): Promise<void> | undefined => {
    if (this.early && !this.stopped) return this.greeted;
    const socket = (this.ws.raw as { _socket?: Socket } | undefined)?._socket;
    if (this.stopped || !socket?.writableNeedDrain) return undefined;
    return new Promise((resolve) => {
      const done = () => {
        socket.off('drain', done);
        socket.off('close', done);
        resolve();
      };
      socket.on('drain', done);
      socket.on('close', done);
    });
  };

  private readonly send = (json: string): void => {
    if (this.stopped) return;
    const raw = this.ws.raw as WebSocket | undefined;
    if (raw && raw.bufferedAmount > this.limits.maxBehindBytes) {
      this.cutOff(raw);
      return;
    }
    this.corkForTick(raw);
    this.ws.send(json);
  };

  /**
   * Holds this socket's writes until the current tick ends: the events one write of the recorder
   * stored (a turn's `usage` and `done`, a replayed page) leave in one system call, not one each.
   * Under load those calls (each waking the reader) were the gateway's largest single cost.
   */
  private corkForTick(raw: WebSocket | undefined): void {
    const socket = (raw as { _socket?: Socket } | undefined)?._socket;
    if (this.corked || !socket || socket.destroyed) return;
    this.corked = true;
    socket.cork();
    process.nextTick(() => {
      this.corked = false;
      socket.uncork();
    });
  }

  /** Stops sending and closes; a reader that takes not even the close frame is cut off after the grace. */
  private cutOff(raw: WebSocket): void {
    this.close();
    raw.close(BEHIND_CLOSE.code, BEHIND_CLOSE.reason);
    const grace = setTimeout(() => raw.terminate(), this.limits.closeGraceMs);
    grace.unref();
    raw.once('close', () => clearTimeout(grace));
  }

  private fail(err: unknown): void {
    this.error(describeError(err).detail);
  }

  private error(message: string): void {
    this.reply({ type: 'error', message });
  }

  private reply(event: Record<string, unknown>): void {
    if (this.ws.readyState === 1) this.ws.send(JSON.stringify(event));
  }
}
