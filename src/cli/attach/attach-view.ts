import type { DoneEvent } from '../../agent/events.js';
import { fromWire, type WireEvent } from '../../cluster/wire.js';
import type { ApprovalRequest } from '../../permissions/gate.js';
import { type ApprovalIo, askApproval } from '../approval-prompt.js';
import { type Style, TerminalRenderer } from '../render.js';
import { visible } from '../sanitize.js';
import type { GatewayClient, HistoryMessage } from './gateway-client.js';
import type { Connected } from './session-stream.js';
import { storedLines, userLine } from './stored-lines.js';

/** Where attach writes, and how it reads an answer to a question. */
export interface AttachIo {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  style: Style;
  /** Stdout is a file or pipe: only answers go there, as in a one-shot run. */
  answerOnly: boolean;
  /** Reads a line for a question; undefined when cancelled or the input ended. */
  answer(question: string, signal: AbortSignal): Promise<string | undefined>;
  /** Reads one of `keys` as soon as it is pressed (at a terminal); unset: a line starting with one. */
  choose?(question: string, keys: readonly string[], signal: AbortSignal): Promise<string | undefined>;
}

type SessionEvent = WireEvent & { seq?: number };

/**
 * What `hearth attach` shows of a session and how it takes part: the session's events through
 * the CLI's own renderer (everything made visible by sanitize.ts first), the gateway's own events
 * (messages from any client, answered approvals, todos, errors) as lines of their own, approval
 * questions asked here as the REPL asks them, and which of the messages sent from here have run.
 */
export class AttachView {
  private readonly renderer: TerminalRenderer;
  private running = false;
  /** Messages sent from here and not yet started, in order. */
  private readonly sent: string[] = [];
  /** A message sent from here is the one running. */
  private ownRunning = false;
  private lastReason: DoneEvent['reason'] | undefined;
  private readonly idleWaiters: Array<() => void> = [];
  /** Approval questions open here, by call id; an answer from elsewhere cancels one. */
  private readonly asking = new Map<string, AbortController>();
  private questions: Promise<void> = Promise.resolve();
  /** Events up to this seq are a replay; their approval requests are asked only if still waiting. */
  private replayedUpTo = 0;
  private waiting = new Set<string>();
  /** Events are shown one after another: a range of stored messages holds later ones back while read. */
  private order: Promise<void> = Promise.resolve();
  /** Stored messages shown so far (their count): each is shown once, whoever points at it. */
  private storedShown = 0;
  private history: HistoryMessage[] = [];
  /** What the first connection said is there to show before the user is asked for anything. */
  private replay: { seq: number; tail: boolean; done(): void } | undefined;
  private handledSeq = 0;

  constructor(
    private readonly session: string,
    private readonly client: GatewayClient,
    private readonly io: AttachIo,
    /** Echo messages sent from here (not at a terminal, where the user typed them on screen already). */
    private readonly echoOwn: boolean,
    /** Told when the session goes idle (to show the prompt again). */
    private readonly onIdle: () => void = () => {},
  ) {
    this.renderer = new TerminalRenderer(io.out, io.err, io.style, io.answerOnly);
  }

  get busy(): boolean {
    return this.running;
  }

  /** The stop reason of the last turn started from here. */
  get lastOwnReason(): DoneEvent['reason'] | undefined {
    return this.lastReason;
  }

  connected(hello: Connected): void {
    this.order = this.order.then(() => {
      this.replayedUpTo = hello.last_seq;
      this.waiting = new Set(hello.waiting);
      this.running = hello.running;
    });
  }

  /**
   * Resolves once the session so far is shown: the events the first connection replays, and the
   * turns run in the terminal since the gateway's last (which come after them).
   */
  caughtUp(hello: Connected, since: number): Promise<void> {
    return new Promise((done) => {
      this.handledSeq = Math.max(this.handledSeq, since);
      this.replay = { seq: hello.last_seq, tail: hello.unshown !== undefined, done };
      this.order = this.order.then(() => this.checkCaughtUp());
    });
  }

  /** Stored messages before `count` are not shown (`--no-history`). */
  skipStored(count: number): void {
    this.storedShown = Math.max(this.storedShown, count);
  }

  /** Takes the stream's events in order (see `order`). */
  take(event: SessionEvent): Promise<void> {
    this.order = this.order
      .then(async () => {
        if (event.type === 'stored_messages') await this.stored(event);
        else this.handle(event);
        if (typeof event.seq === 'number') this.handledSeq = Math.max(this.handledSeq, event.seq);
        else if (event.type === 'stored_messages' && this.replay) this.replay.tail = false;
        this.checkCaughtUp();
      })
      .catch((err: unknown) => this.line(this.io.style.red(visible((err as Error).message))));
    return this.order;
  }

  private checkCaughtUp(): void {
    const replay = this.replay;
    if (!replay || replay.tail || this.handledSeq < replay.seq) return;
    this.replay = undefined;
    replay.done();
  }

  /** Stored messages `[from, to)` (turns run outside the gateway), read from the history. */
  private async stored(event: SessionEvent): Promise<void> {
    const from = Math.max(Number(event.from) || 0, this.storedShown);
    const to = Number(event.to) || 0;
    if (to <= from) return;
    if (this.history.length < to) {
      try {
        this.history = (await this.client.history(this.session)).messages;
      } catch (err) {
        this.line(
          this.io.style.red(`The earlier messages could not be read: ${visible((err as Error).message)}`),
        );
        return;
      }
    }
    for (const line of storedLines(this.history, from, to, this.io.style)) this.line(line);
    this.storedShown = to;
  }

  /** A message was sent from here: it is shown when it starts, and waited for at the end of input. */
  sentMessage(text: string): void {
    this.sent.push(text);
  }

  /** A message that did not reach the gateway after all. */
  forget(text: string): void {
    const at = this.sent.lastIndexOf(text);
    if (at >= 0) this.sent.splice(at, 1);
  }

  /** Resolves once every message sent from here has run to its end. */
  ownWorkDone(): Promise<void> {
    if (this.sent.length === 0 && !this.ownRunning) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Lets anything waiting on this session go (the connection is gone for good). */
  release(): void {
    for (const wake of this.idleWaiters.splice(0)) wake();
    for (const question of this.asking.values()) question.abort();
  }

  line(text: string): void {
    this.io.err.write(`${text}\n`);
  }

  private handle(event: SessionEvent): void {
    switch (event.type) {
      case 'user_message': {
        this.running = true;
        const text = typeof event.text === 'string' ? event.text : '';
        const own = this.sent[0] === text;
        if (own) {
          this.sent.shift();
          this.ownRunning = true;
        }
        if (!own || this.echoOwn) this.line(userLine(text, event.images, this.io.style));
        return;
      }
      case 'approval_resolved':
        this.resolved(event);
        return;
      case 'task_update':
        if (typeof event.summary === 'string' && event.summary)
          this.line(this.io.style.dim(visible(event.summary)));
        return;
      case 'mode_changed':
        this.line(this.io.style.dim(`mode: ${visible(String(event.mode))}`));
        return;
      case 'cleared':
        this.line(this.io.style.dim('The conversation was started over.'));
        return;
      case 'queued':
        this.line(this.io.style.dim(`queued (position ${Number(event.position)})`));
        return;
      case 'error':
        this.line(this.io.style.red(`Error: ${visible(String(event.message))}`));
        // An error with a seq ended the session's work item; one without was a reply to us.
        if (event.seq !== undefined) this.finished('error');
        return;
    }
    const agentEvent = fromWire(event);
    if (!agentEvent) return;
    this.renderer.render(agentEvent);
    if (agentEvent.type === 'approval_request') this.request(agentEvent, event.seq);
    if (agentEvent.type === 'done') this.finished(agentEvent.reason);
  }

  private finished(reason: DoneEvent['reason']): void {
    this.running = false;
    if (this.ownRunning) {
      this.ownRunning = false;
      this.lastReason = reason;
    }
    if (this.sent.length === 0 && !this.ownRunning) for (const wake of this.idleWaiters.splice(0)) wake();
    this.onIdle();
  }

  private request(request: ApprovalRequest, seq: number | undefined): void {
    const id = request.call.id;
    const replayed = seq !== undefined && seq <= this.replayedUpTo;
    if ((replayed && !this.waiting.has(id)) || this.asking.has(id)) return;
    const controller = new AbortController();
    this.asking.set(id, controller);
    // One question at a time, in the order the run asked them.
    this.questions = this.questions.then(() => this.ask(request, controller));
  }

  private async ask(request: ApprovalRequest, controller: AbortController): Promise<void> {
    if (controller.signal.aborted) return;
    const { style } = this.io;
    const io: ApprovalIo = {
      style,
      write: (text) => this.io.err.write(text),
      ask: (question, signal) => this.io.answer(question, signal),
      choose: async (question, keys, signal) => {
        if (this.io.choose) return this.io.choose(question, keys, signal);
        for (;;) {
          const line = await this.io.answer(question, signal);
          if (line === undefined) return undefined;
          const key = line.trim().toLowerCase().slice(0, 1);
          if (keys.includes(key)) return key;
          this.io.err.write(`  Answer ${keys.join(', ')}.\n`);
        }
      },
    };
    const answer = await askApproval(request, controller.signal, io);
    if (controller.signal.aborted) return;
    this.asking.delete(request.call.id);
    try {
      await this.client.answer(this.session, request.call.id, answer);
    } catch (err) {
      this.line(style.red(`The answer did not reach the gateway: ${visible((err as Error).message)}`));
    }
  }

  private resolved(event: SessionEvent): void {
    const id = String(event.tool_call_id);
    this.waiting.delete(id);
    const open = this.asking.get(id);
    this.asking.delete(id);
    if (!open) return;
    // Answered elsewhere (another client, the timeout, the run stopping) while asked here.
    open.abort();
    const by = event.by === 'client' ? 'by another client' : `(${visible(String(event.by))})`;
    this.line(this.io.style.dim(`  answered ${by}: ${visible(String(event.decision))}`));
  }
}
