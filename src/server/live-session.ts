import type { Tracer } from '@opentelemetry/api';
import type { DoneEvent } from '../agent/events.js';
import { blindNote, unansweredCalls } from '../agent/loop.js';
import { type AgentSession, restartConversation } from '../agent/session.js';
import type { RunningTurn } from '../cluster/turn-queue.js';
import type { QueuedTurn } from '../cluster/work-queue.js';
import type { ApprovalAnswer } from '../permissions/gate.js';
import type { EventLog } from '../store/event-log.js';
import type { SessionRow } from '../store/rows.js';
import type { SessionStorage } from '../store/session-storage.js';
import { readPlan, readTodos, renderTodos } from '../tools/tracking/index.js';
import type { SessionState } from '../tools/types.js';
import { type AnswerOutcome, ApprovalBook } from './approvals.js';
import { showingStored, type UnshownMessages, unshownMessages } from './history.js';
import { describeError, GatewayError } from './problem.js';
import { EventRecorder, type Subscriber } from './recorder.js';
import type { ImageInput } from './schemas.js';
import { RunTrace } from './tracing.js';
import type { TurnRelay } from './turn-relay.js';
import { type RunFacts, type RunMode, usageJson, type WireEvent, wireRun } from './wire.js';

/** What a finished turn returns over HTTP: the agent_computer reply, with Hearth's stop reason. */
export interface TurnResult {
  session_id: string;
  text: string;
  /** The agent_computer gateway's later name for `text`. */
  response: string;
  iterations: number;
  model: string;
  usage: ReturnType<typeof usageJson>;
  mode: RunMode;
  reason: DoneEvent['reason'];
}

export interface CompactResult {
  method: 'elided' | 'summary' | 'trimmed' | 'none';
  before: number;
  after: number;
}

/** An agent session ready to run, with what its runs report besides their events. */
export interface OpenedAgent {
  session: AgentSession;
  /** Changes when the model or mode does: the agent session is then opened again. */
  key: string;
  facts: Omit<RunFacts, 'usage' | 'mode'>;
  /** Whether the model accepts images (config or server probe); unknown when unset. */
  vision?: boolean;
  /** Said once per session in this process: a weak sandbox, ignored settings, a guessed window. */
  notes: string[];
}

/** What a live session needs from the hub that holds it. */
export interface SessionHost {
  store: SessionStorage;
  events: EventLog;
  now: () => number;
  tracer: Tracer;
  approvalTimeoutMs: number;
  /** The agent session for the next run: `current` again when the model and mode are unchanged. */
  open(
    row: SessionRow,
    options: { model?: string; mode: RunMode; live: LiveSession; current?: OpenedAgent },
  ): Promise<OpenedAgent>;
  activity(event: WireEvent, sessionId: string): void;
  /** Turns run by `hearth worker`s and orders sent on to them (a shared database); absent: none. */
  remote?: TurnRelay;
  /** The model chosen at run time, sent with turns queued to workers (their servers are their own). */
  readonly selectedModel?: string;
  /** The session has nothing running, queued or watching: the hub may let it go. */
  idle(live: LiveSession): void;
  /** Of a session's setup notes, those not told yet in this process (a let-go session comes back). */
  untold(id: string, notes: readonly string[]): string[];
}

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

type Job =
  | (JobBase & {
      kind: 'message';
      text?: string;
      images?: ImageInput[];
      mode?: RunMode;
      model?: string;
      /** For a worker's run: answers to the calls the paused run waits on (see `answer`). */
      answers?: QueuedTurn['answers'];
      done: Deferred<TurnResult>;
    })
  | (JobBase & { kind: 'compact'; done: Deferred<CompactResult> });

/** Work handed to a session: where it stands in the queue, when it starts, how it ends. */
export interface Queued<T> {
  /** 0: it runs now; n: n items run before it. */
  position: number;
  started: Promise<number>;
  result: Promise<T>;
}

const MODE_KEY = 'gateway.mode';

/**
 * One session as the gateway runs it: a queue of work done one item at a time (messages are
 * never dropped: a busy session queues them and says where), the approvals its run waits on, and
 * the recorder that numbers, stores and fans out its events.
 */
export class LiveSession {
  readonly recorder: EventRecorder;
  readonly approvals: ApprovalBook;
  private readonly queue: Job[] = [];
  /**
   * The item running. `turn`: the queued turn a worker runs for it (`gateway.turns: workers`), with
   * `unstarted`, its reply should it be taken back before a worker started it; `early`: messages
   * steered in before its agent session was open, or before its turn was queued; `stopAsked`: a
   * stop that came before its turn was queued.
   */
  private running:
    | {
        controller: AbortController;
        turn?: RunningTurn;
        unstarted?: TurnResult;
        ready?: boolean;
        early: string[];
        stopAsked?: boolean;
      }
    | undefined;
  private agent: OpenedAgent | undefined;
  /** With turns on workers: messages steered in too late for the last turn, for the next one. */
  private readonly leftover: string[] = [];
  /** The session's `updatedAt` after our last run: a different one means another process ran it. */
  private stamp: number | undefined;
  private tasks: string;
  private pumping: Promise<void> = Promise.resolve();

  /** The holder of the session's run lease when another process runs it now. */
  private elsewhere: string | undefined;
  /** The queued turn that holder runs, when it is a worker (which takes orders through the database). */
  private elsewhereTurn: RunningTurn | undefined;

  /**
   * @param writer for a session only the shared event log knows (no stored row here): who writes
   *   its events. It is then watched here and nothing else, each change refused with 409.
   */
  constructor(
    readonly id: string,
    private readonly host: SessionHost,
    /** The session's durable state (its mode, todos, plan), shared with its agent session. */
    readonly state: SessionState,
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
    this.tasks = this.taskKey();
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Work waiting behind the running item. */
  get queued(): number {
    return this.queue.length;
  }

  get mode(): RunMode {
    return this.state.get(MODE_KEY) === 'deep_work' ? 'deep_work' : 'bounded';
  }

  /** Runs a turn (`text` undefined: carries on a paused run). Position 0: it runs now. */
  send(input: {
    text?: string;
    images?: ImageInput[];
    mode?: RunMode;
    model?: string;
    answers?: QueuedTurn['answers'];
  }): Queued<TurnResult> {
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

  /** Adds a message to the running turn at its next safe point; false when nothing runs. */
  async steer(text: string): Promise<boolean> {
    const turn = this.forwarded();
    if (turn) {
      await this.host.remote!.order(turn.key, { kind: 'steer', text });
      return true;
    }
    this.refuseRemote('order');
    if (!this.running) return false;
    if (!this.running.ready || !this.agent) this.running.early.push(text);
    else this.agent.session.steer(text);
    return true;
  }

  /** Messages steered in that no run has taken yet (they wait for the next one). */
  get unsteered(): readonly string[] {
    return [...(this.running?.early ?? []), ...(this.agent?.session.queued ?? [])];
  }

  /** Stops the running item (queued ones still run); false when nothing was running. */
  async abort(): Promise<boolean> {
    const turn = this.forwarded();
    if (turn) {
      await this.stopForwarded(turn);
      return true;
    }
    this.refuseRemote('order');
    if (!this.running) return false;
    // Being queued to the workers: stopped once its turn is known (`runElsewhere`). Aborting the
    // controller would only stop this gateway's waiting, and the turn would run all the same.
    if (this.host.remote?.dispatches) this.running.stopAsked = true;
    else this.running.controller.abort();
    return true;
  }

  /**
   * Stops a worker's turn: one queued from here that no worker started yet is taken back and never
   * runs (its watchers are told it stopped); otherwise the worker running it is told to stop.
   */
  private async stopForwarded(turn: RunningTurn): Promise<void> {
    const relay = this.host.remote!;
    const unstarted = this.running?.turn?.key === turn.key ? this.running.unstarted : undefined;
    if (unstarted && (await relay.withdraw(turn.key, { result: unstarted }))) {
      const { session_id, response, ...done } = unstarted;
      this.record({ type: 'done', ...done });
      return;
    }
    await relay.order(turn.key, { kind: 'abort' });
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
        // A worker runs the rest: the answer goes with the turn, to that worker's approvals.
        if (this.host.remote?.dispatches) {
          this.send({ answers: [{ callId, ...answer }] });
          return 'accepted';
        }
        this.approvals.expect(callId);
        const outcome = this.approvals.answer(callId, answer);
        this.send({});
        return outcome;
      }
    }
    return this.approvals.answer(callId, answer);
  }

  setMode(mode: RunMode): void {
    this.refuseRemote();
    this.state.set(MODE_KEY, mode);
    this.record({ type: 'mode_changed', mode });
  }

  /** Starts the conversation over (nothing stored is deleted); refused while work is under way. */
  async clear(): Promise<void> {
    this.refuseRemote();
    if (this.running || this.queue.length > 0) {
      throw new GatewayError(409, `Session ${this.id} is busy; stop it (abort) before clearing it.`);
    }
    await restartConversation(this.host.store, this.id);
    await this.agent?.session.close();
    this.agent = undefined;
    this.record({ type: 'cleared' });
  }

  /** Replays the stored events after `since`, then sends every new one; returns the unsubscribe. */
  subscribe(subscriber: Subscriber, since?: number): () => void {
    const stop = this.recorder.subscribe(subscriber, since);
    return () => {
      stop();
      this.checkIdle();
    };
  }

  /** Refuses what is queued, stops what runs, waits for it to wind down, and writes what is buffered. */
  async close(): Promise<void> {
    for (const job of this.queue.splice(0)) {
      job.started.resolve(this.recorder.lastSeq);
      job.done.reject(new GatewayError(503, 'The gateway is shutting down; send it again once it is back.'));
    }
    this.running?.controller.abort();
    await this.pumping;
    // The tools' interpreters end with the session's time here (idle, or the gateway stopping).
    await this.agent?.session.close();
    await this.recorder.close();
  }

  /**
   * Where the session runs when another process runs it (a worker on another machine): it is then
   * watched here and nothing else, each change refused with 409.
   */
  get runsAt(): string | undefined {
    return this.writer ?? (this.running ? undefined : this.elsewhere);
  }

  /**
   * Where the session runs when this gateway can only watch it (clients then offer no composer):
   * not for a worker's queued turn when this gateway queues its turns to workers too.
   */
  get watchedOnlyAt(): string | undefined {
    return this.elsewhereTurn && this.host.remote?.dispatches ? undefined : this.runsAt;
  }

  /** Something runs: here, or a worker's queued turn that takes orders from here. */
  get working(): boolean {
    return this.busy || this.elsewhereTurn !== undefined;
  }

  /**
   * Told by the hub: who else holds the session's run lease now (undefined: nobody), and the
   * queued turn it runs when it is a worker.
   */
  leasedTo(holder: string | undefined, turn?: RunningTurn): void {
    this.elsewhere = holder;
    this.elsewhereTurn = holder === undefined ? undefined : turn;
  }

  /** Why a session another process runs takes no orders here (409). */
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
    if (this.elsewhereTurn && (what === 'order' || (what === 'work' && this.host.remote?.dispatches))) return;
    throw new GatewayError(409, this.refusal);
  }

  /** The worker's turn orders go to: the one running the session now, else the one queued from here. */
  private forwarded(): RunningTurn | undefined {
    if (this.writer !== undefined) return undefined;
    return this.elsewhereTurn ?? this.running?.turn;
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
      this.running = { controller, early: [] };
      const { signal } = controller;
      try {
        // Watchers of this job's events start after everything recorded before it.
        const before = await this.recorder.stored();
        job.started.resolve(before);
        // Settled once its events are stored and sent, so a stream that ends with it has them all.
        if (this.host.remote?.dispatches) {
          const result = await this.runElsewhere(job, before, signal);
          await this.recorder.feed.sync();
          if (job.kind === 'message') job.done.resolve(result as TurnResult);
          else job.done.resolve(result as CompactResult);
        } else if (job.kind === 'message') {
          const result = await this.runTurn(job, signal);
          await this.recorder.flush();
          job.done.resolve(result);
        } else {
          const result = await this.runCompaction(signal);
          await this.recorder.flush();
          job.done.resolve(result);
        }
      } catch (err) {
        job.started.resolve(this.recorder.lastSeq);
        const { detail } = describeError(err);
        // A worker running the turn recorded its failure; one this gateway stopped waiting for goes on.
        if (!this.running.turn) this.record({ type: 'error', message: detail });
        else await this.recorder.feed.sync().catch(() => undefined);
        await this.recorder.flush();
        job.done.reject(err);
      } finally {
        this.approvals.clear();
        await this.recorder.flush();
        // Read while still running: a message sent meanwhile would otherwise start a second pump.
        this.stamp = await this.lastUpdate();
        this.running = undefined;
      }
    }
    this.checkIdle();
  }

  private async lastUpdate(): Promise<number | undefined> {
    try {
      return (await this.host.store.get(this.id)).updatedAt;
    } catch {
      return undefined; // deleted meanwhile
    }
  }

  private checkIdle(): void {
    if (this.isIdle) this.host.idle(this);
  }

  private async prepare(model: string | undefined, mode: RunMode): Promise<OpenedAgent> {
    const row = await this.host.store.get(this.id);
    const current = row.updatedAt === this.stamp ? this.agent : undefined;
    const opened = await this.host.open(row, { model, mode, live: this, current });
    if (opened !== this.agent) await this.agent?.session.close();
    this.agent = opened;
    if (this.running) {
      this.running.ready = true;
      for (const text of this.running.early.splice(0)) opened.session.steer(text);
    }
    for (const message of this.host.untold(this.id, opened.notes)) this.record({ type: 'warning', message });
    return opened;
  }

  /** Stored messages no event shows (see `unshownMessages`). */
  unshown(): Promise<UnshownMessages | undefined> {
    return unshownMessages(this.host.store, this.id, () => this.recorder.stored());
  }

  private runTurn(job: Extract<Job, { kind: 'message' }>, signal: AbortSignal): Promise<TurnResult> {
    return showingStored(this.host.store, this.recorder, () => this.turn(job, signal));
  }

  private async turn(job: Extract<Job, { kind: 'message' }>, signal: AbortSignal): Promise<TurnResult> {
    const mode = job.mode ?? this.mode;
    const images = job.images?.length ? job.images : undefined;
    if (job.text !== undefined)
      this.record({ type: 'user_message', text: job.text, ...(images ? { images } : {}) });
    const { session, facts: known, vision } = await this.prepare(job.model, mode);
    // Said before the run, not after a text-only answer that ignored the picture.
    if (images && vision === false) throw new GatewayError(422, blindNote(known.model));
    const facts: RunFacts = { ...known, mode, usage: { prompt: 0, completion: 0 } };
    const wire = wireRun(facts);
    const trace = new RunTrace(this.host.tracer, { sessionId: this.id, model: facts.model, mode });
    let done: DoneEvent | undefined;
    try {
      const parts = images?.map((image) => ({ mimeType: image.mime_type, base64: image.data }));
      for await (const event of session.run(job.text, signal, parts)) {
        trace.observe(event);
        if (event.type === 'approval_request') {
          this.approvals.expect(event.call.id);
        } else if (event.type === 'done') {
          done = event;
        }
        this.record(wire(event));
        if (event.type === 'tool_result') this.reportTasks();
      }
    } catch (err) {
      trace.end(describeError(err).detail);
      throw err;
    }
    trace.end();
    if (!done) throw new GatewayError(500, 'The run ended without a done event.');
    return {
      session_id: this.id,
      text: done.text,
      response: done.text,
      iterations: done.turns,
      model: facts.model,
      usage: usageJson(facts.usage),
      mode,
      reason: done.reason,
    };
  }

  /**
   * Queues the job to `hearth worker`s (`gateway.turns: workers`) and waits for its reply; the
   * worker records the turn's events, which reach this session's watchers through the shared log.
   */
  private async runElsewhere(
    job: Job,
    before: number,
    signal: AbortSignal,
  ): Promise<TurnResult | CompactResult> {
    const relay = this.host.remote!;
    const { workspace } = await this.host.store.get(this.id);
    const mode = job.kind === 'message' ? (job.mode ?? this.mode) : this.mode;
    const model = job.kind === 'message' ? (job.model ?? this.host.selectedModel) : undefined;
    const key = await relay.queue(
      job.kind === 'compact'
        ? { session: this.id, kind: 'compact' }
        : {
            session: this.id,
            kind: 'message',
            text: job.text,
            images: job.images,
            mode,
            model,
            ...(job.answers ? { answers: job.answers } : {}),
            ...(this.leftover.length > 0 ? { steers: this.leftover.splice(0) } : {}),
          },
      workspace,
    );
    const running = this.running!;
    running.turn = { key, worker: '', startedSeq: before };
    if (job.kind === 'message') {
      running.unstarted = {
        session_id: this.id,
        text: '',
        response: '',
        iterations: 0,
        model: model ?? '',
        usage: usageJson({ prompt: 0, completion: 0 }),
        mode,
        reason: 'aborted',
      };
    }
    const unattended = await relay.unattended().catch(() => undefined);
    if (unattended) this.record({ type: 'warning', message: unattended });
    // What came for it while it was being queued.
    for (const text of running.early.splice(0)) await relay.order(key, { kind: 'steer', text });
    if (running.stopAsked) await this.stopForwarded(running.turn);
    const { reply, unsteered } = await relay.outcome<TurnResult | CompactResult>(key, signal);
    this.leftover.push(...unsteered);
    return reply;
  }

  private runCompaction(signal: AbortSignal): Promise<CompactResult> {
    return showingStored(this.host.store, this.recorder, async () => {
      const { session } = await this.prepare(undefined, this.mode);
      const { method, before, after } = await session.compact(signal);
      if (method !== 'none') this.record({ type: 'compaction', before, after, method });
      return { method, before, after };
    });
  }

  /** Sends `task_update` when a call changed the todo list or the plan. */
  private reportTasks(): void {
    const key = this.taskKey();
    if (key === this.tasks) return;
    this.tasks = key;
    const tasks = readTodos(this.state);
    this.record({
      type: 'task_update',
      tasks,
      plan: readPlan(this.state) ?? null,
      summary: renderTodos(tasks),
    });
  }

  private taskKey(): string {
    return JSON.stringify([readTodos(this.state), readPlan(this.state)]);
  }

  private record(event: WireEvent): void {
    this.recorder.record(event);
    if (event.type === 'tool_call' || event.type === 'tool_result') this.host.activity(event, this.id);
  }
}
