import { unansweredCalls } from '../agent/loop.js';
import { restartConversation } from '../agent/session.js';
import { EventRecorder, type Ready, type Subscriber } from '../cluster/recorder.js';
import type { RunningTurn } from '../cluster/turn-queue.js';
import type { CompactResult, TurnResult } from '../cluster/turn-types.js';
import type { RunMode, WireEvent } from '../cluster/wire.js';
import type { ApprovalAnswer } from '../permissions/gate.js';
import type { SessionState } from '../tools/types.js';
import { type AnswerOutcome, ApprovalBook } from './approvals.js';
import { type UnshownMessages, unshownMessages } from './history.js';
import type { LiveSession, MessageInput, Queued, SessionHost } from './live-session.js';
import { describeError, GatewayError } from './problem.js';

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A caller that stops listening (a closed connection) must not leave an unhandled rejection.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

interface JobBase {
  /** Resolved as the job starts, with the seq of the last event before its own. */
  started: Deferred<number>;
}

export type Job =
  | (JobBase & MessageInput & { kind: 'message'; done: Deferred<TurnResult> })
  | (JobBase & { kind: 'compact'; done: Deferred<CompactResult> });

/** The item running: `early` holds messages steered in before it could take them. */
export interface Running {
  controller: AbortController;
  early: string[];
}

const MODE_KEY = 'gateway.mode';

/**
 * What every live session does whoever runs its turns: the queue of work, done one item at a
 * time; the recorder and approvals; where the session runs when another process holds its run
 * lease, and the orders sent on to a worker running it (steer, abort, answers go through the
 * database; anything else is refused with 409). A subclass runs the items (`execute`) and takes
 * orders for the item it runs.
 */
export abstract class SessionActor<R extends Running = Running> implements LiveSession {
  readonly recorder: EventRecorder;
  readonly approvals: ApprovalBook;
  protected readonly queue: Job[] = [];
  protected running: R | undefined;
  private pumping: Promise<void> = Promise.resolve();
  /** The holder of the session's run lease when another process runs it now. */
  private elsewhere: string | undefined;
  /** The queued turn that holder runs, when it is a worker (which takes orders through the database). */
  private elsewhereTurn: RunningTurn | undefined;

  /** Whether this gateway queues the session's work to workers. */
  protected abstract readonly dispatches: boolean;

  /** Runs `job` (its events stored and sent by the time it settles); `before`: the seq before it. */
  protected abstract execute(
    job: Job,
    before: number,
    signal: AbortSignal,
  ): Promise<TurnResult | CompactResult>;
  /** The running item's state as it starts. */
  protected abstract begin(controller: AbortController): R;
  /** Adds a message to the running item. */
  protected abstract steerRunning(running: R, text: string): void;
  /** Stops the running item. */
  protected abstract abortRunning(running: R): void;
  /** Answers a call a paused run waits on while nothing runs: the run carries on. */
  protected abstract answerPaused(callId: string, answer: ApprovalAnswer): AnswerOutcome;
  abstract readonly unsteered: readonly string[];

  constructor(
    readonly id: string,
    protected readonly host: SessionHost,
    readonly state: SessionState,
    /** Who writes the events of a session only the shared log knows (see `openLiveSession`). */
    private readonly writer?: string,
  ) {
    this.recorder = new EventRecorder(id, host.events, host.now);
    this.approvals = new ApprovalBook(host.approvalTimeoutMs, (callId, answer, by) =>
      this.record({
        type: 'approval_resolved',
        tool_call_id: callId,
        decision: answer.decision,
        approved: answer.decision !== 'deny',
        by,
        ...(answer.reason ? { reason: answer.reason } : {}),
      }),
    );
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  get queued(): number {
    return this.queue.length;
  }

  get mode(): RunMode {
    return this.state.get(MODE_KEY) === 'deep_work' ? 'deep_work' : 'bounded';
  }

  send(input: MessageInput): Queued<TurnResult> {
    this.refuseRemote('work');
    const job = {
      kind: 'message' as const,
      ...input,
      started: deferred<number>(),
      done: deferred<TurnResult>(),
    };
    return { position: this.enqueue(job), started: job.started.promise, result: job.done.promise };
  }

  compact(): Queued<CompactResult> {
    this.refuseRemote('work');
    const job = { kind: 'compact' as const, started: deferred<number>(), done: deferred<CompactResult>() };
    return { position: this.enqueue(job), started: job.started.promise, result: job.done.promise };
  }

  async steer(text: string): Promise<boolean> {
    const turn = this.forwarded();
    if (turn) {
      await this.host.remote!.order(turn.key, { kind: 'steer', text });
      return true;
    }
    this.refuseRemote('order');
    if (!this.running) return false;
    this.steerRunning(this.running, text);
    return true;
  }

  async abort(): Promise<boolean> {
    const turn = this.forwarded();
    if (turn) {
      await this.stopForwarded(turn);
      return true;
    }
    this.refuseRemote('order');
    if (!this.running) return false;
    this.abortRunning(this.running);
    return true;
  }

  /** Stops a worker's turn: the worker running it is told to stop. */
  protected async stopForwarded(turn: RunningTurn): Promise<void> {
    await this.host.remote!.order(turn.key, { kind: 'abort' });
  }

  /**
   * Answers a call waiting for approval. When the session is idle and paused (a run that could
   * not ask, e.g. in the CLI), the answer is kept and the run carries on.
   */
  async answer(callId: string, answer: ApprovalAnswer): Promise<AnswerOutcome> {
    const turn = this.forwarded();
    if (turn)
      return this.host.remote!.answer(this.host.events, this.id, turn, { kind: 'answer', callId, ...answer });
    this.refuseRemote('order');
    if (!this.running && this.queue.length === 0) {
      const row = await this.host.store.get(this.id);
      const waiting = row.status === 'paused' ? unansweredCalls(await this.host.store.messages(this.id)) : [];
      // A run may have started while the store answered.
      if (!this.running && this.queue.length === 0 && waiting.some((call) => call.id === callId)) {
        return this.answerPaused(callId, answer);
      }
    }
    return this.approvals.answer(callId, answer);
  }

  setMode(mode: RunMode): void {
    this.refuseRemote();
    this.state.set(MODE_KEY, mode);
    this.record({ type: 'mode_changed', mode });
  }

  async clear(): Promise<void> {
    this.refuseRemote();
    if (this.running || this.queue.length > 0) {
      throw new GatewayError(409, `Session ${this.id} is busy; stop it (abort) before clearing it.`);
    }
    await restartConversation(this.host.store, this.id);
    await this.release();
    this.record({ type: 'cleared' });
  }

  subscribe(subscriber: Subscriber, since?: number, ready?: Ready): () => void {
    const stop = this.recorder.subscribe(subscriber, since, ready);
    return () => {
      stop();
      this.checkIdle();
    };
  }

  async close(): Promise<void> {
    for (const job of this.queue.splice(0)) {
      job.started.resolve(this.recorder.lastSeq);
      job.done.reject(new GatewayError(503, 'The gateway is shutting down; send it again once it is back.'));
    }
    this.running?.controller.abort();
    await this.pumping;
    await this.release();
    await this.recorder.close();
  }

  /** Lets go what a run here holds (the agent session): on close, and when the session is cleared. */
  protected async release(): Promise<void> {}

  get runsAt(): string | undefined {
    return this.writer ?? (this.running ? undefined : this.elsewhere);
  }

  /** Not for a worker's queued turn when this gateway queues its turns to workers too. */
  get watchedOnlyAt(): string | undefined {
    return this.elsewhereTurn && this.dispatches ? undefined : this.runsAt;
  }

  get runsElsewhere(): boolean {
    return this.elsewhere !== undefined;
  }

  get working(): boolean {
    return this.busy || this.elsewhereTurn !== undefined;
  }

  leasedTo(holder: string | undefined, turn?: RunningTurn): void {
    this.elsewhere = holder;
    this.elsewhereTurn = holder === undefined ? undefined : turn;
  }

  get refusal(): string {
    return `Session ${this.id} runs in ${this.runsAt ?? 'this gateway'}: it can be watched here, but messages, approvals and stops go to the process that runs it.`;
  }

  /**
   * Refuses what another process running the session would have to do (409). A worker running a
   * queued turn takes orders through the database, and a gateway that queues its turns to workers
   * queues more behind it; a process that does not listen (a CLI) takes nothing.
   */
  private refuseRemote(what: 'work' | 'order' | 'change' = 'change'): void {
    if (this.runsAt === undefined) return;
    if (this.elsewhereTurn && (what === 'order' || (what === 'work' && this.dispatches))) return;
    throw new GatewayError(409, this.refusal);
  }

  /** The worker's turn orders go to: the one running the session now, else the one queued from here. */
  private forwarded(): RunningTurn | undefined {
    if (this.writer !== undefined) return undefined;
    return this.elsewhereTurn ?? this.runningTurn();
  }

  /** The worker's turn that runs the item running here, when a worker runs it. */
  protected runningTurn(): RunningTurn | undefined {
    return undefined;
  }

  get isIdle(): boolean {
    return !this.running && this.queue.length === 0 && this.recorder.watchers === 0;
  }

  private enqueue(job: Job): number {
    const position = this.queue.length + (this.running ? 1 : 0);
    this.queue.push(job);
    if (!this.running) this.pumping = this.pump();
    return position;
  }

  private async pump(): Promise<void> {
    while (!this.running && this.queue.length > 0) {
      const job = this.queue.shift()!;
      const controller = new AbortController();
      this.host.turns(this.id, 'working');
      this.running = this.begin(controller);
      try {
        // Watchers of this job's events start after everything recorded before it.
        const before = await this.recorder.stored();
        job.started.resolve(before);
        const result = await this.execute(job, before, controller.signal);
        if (job.kind === 'message') job.done.resolve(result as TurnResult);
        else job.done.resolve(result as CompactResult);
      } catch (err) {
        job.started.resolve(this.recorder.lastSeq);
        await this.failed(err);
        await this.recorder.flush();
        job.done.reject(err);
      } finally {
        this.approvals.clear();
        await this.recorder.flush();
        // Before it stops running: a message sent meanwhile would otherwise start a second pump.
        await this.ended();
        this.running = undefined;
      }
    }
    this.host.turns(this.id, 'quiet');
    this.checkIdle();
  }

  /** Tells the watchers what failed. */
  protected async failed(err: unknown): Promise<void> {
    this.record({ type: 'error', message: describeError(err).detail });
  }

  /** Called as an item ends, while it still counts as running. */
  protected async ended(): Promise<void> {}

  private checkIdle(): void {
    if (this.isIdle) this.host.idle(this);
  }

  unshown(): Promise<UnshownMessages | undefined> {
    return unshownMessages(this.host.store, this.id, () => this.recorder.stored());
  }

  protected record(event: WireEvent): void {
    this.recorder.record(event);
    if (event.type === 'tool_call' || event.type === 'tool_result') this.host.activity(event, this.id);
  }
}
