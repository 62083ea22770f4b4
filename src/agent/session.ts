import type { TurnCheckpoints } from '../checkpoints/types.js';
import type { SessionHooks } from '../hooks/hooks.js';
import { DEFAULT_CONTEXT_WINDOW } from '../llm/probe.js';
import type { ChatMessage, ImagePart, ToolCall } from '../llm/types.js';
import type { ApprovalAnswer } from '../permissions/gate.js';
import type { SessionRow } from '../store/rows.js';
import { leaseRefusal, refused } from '../store/run-lease.js';
import type { SessionJournal } from '../store/session-storage.js';
import type { ToolRegistry } from '../tools/registry.js';
import { SessionScratch } from '../tools/scratch.js';
import { type CompactionResult, compactHistory } from './compaction.js';
import type { AgentEvent, SessionEvent } from './events.js';
import { type RunAgentOptions, runAgent } from './loop.js';
import { unansweredCalls } from './pending-calls.js';
import { boundedDisplay, COMPACTION_KEY, type CompactionRecord, storedHistory } from './session-history.js';
import { sessionHooks } from './session-hooks.js';
import { checkpointTurn, resumeAnswers, runDeps, sessionPreface } from './session-run.js';
import { toolResultMessage } from './tool-message.js';
import { type SessionDeps, traced } from './traced-run.js';

export type { SessionDeps, SessionTools } from './session-deps.js';
export { restartConversation } from './session-history.js';

const INTERRUPTED =
  'Interrupted: this call did not finish (the previous run stopped). Check its effect before retrying.';

/**
 * A conversation kept in the store, written through its journal (src/store/session-storage.ts):
 * each message goes to the store as it is appended, and the journal is flushed before each request,
 * before a pause and at each run's end, so a killed process resumes from its last committed message.
 */
export class AgentSession {
  private readonly scratch = new SessionScratch();
  /** Messages sent with `steer` that the running run has not taken yet. */
  private readonly steering: string[] = [];
  private readonly hooks: SessionHooks | undefined;
  /** SessionStart fires once per opened session, before its first run: 'startup' when new, 'resume' when reopened. */
  private startSource: 'startup' | 'resume' | undefined;
  /** Context a SessionStart hook gave, held for the next run that has a task. */
  private startContext: string[] = [];
  /** A smaller window the server's context-exceeded error taught a run; later runs budget with it. */
  private learnedWindow: number | undefined;
  /** The runtime's tools, with those bound to this session's ports in place of their unbound ones. */
  private readonly tools: ToolRegistry;

  private constructor(
    private readonly deps: SessionDeps,
    /** Where this session's writes go, in order; its `state` is the session's durable state. */
    readonly journal: SessionJournal,
    readonly row: SessionRow,
    readonly messages: ChatMessage[],
    /** How many messages the store holds for this session: the seq the next one gets. */
    private stored: number,
    started: 'startup' | 'resume',
  ) {
    const hooked = sessionHooks(deps, row, () => this.messages);
    this.hooks = hooked?.hooks;
    if (hooked && !hooked.parentOwned) this.startSource = started;
    const bound = deps.sessionTools?.({ sessionId: row.id, messageSeq: () => this.stored - 1 });
    this.tools = bound ? deps.tools.bind(bound) : deps.tools;
  }

  get id(): string {
    return this.row.id;
  }

  /** Which session this is and the model it runs with now: the first event of each of its runs. */
  get identity(): SessionEvent {
    return { type: 'session', id: this.id, workspace: this.row.workspace, model: this.deps.llm.model };
  }

  /** A new session; a sub-agent's names the session that started it and how deep it is. */
  static async create(
    deps: SessionDeps,
    systemPrompt: string,
    origin: { parentId: string; depth: number; title: string } | undefined = undefined,
  ): Promise<AgentSession> {
    const system: ChatMessage = { role: 'system', content: systemPrompt };
    const row = await deps.store.create({ workspace: deps.workspace, model: deps.llm.model, ...origin }, [
      system,
    ]);
    return new AgentSession(deps, await deps.store.journal(row.id), row, [system], 1, 'startup');
  }

  /**
   * Opens a stored session. Calls left without results by a crash are answered as interrupted
   * (servers reject a history with unanswered calls); those of a paused run stay pending.
   */
  static async open(deps: SessionDeps, row: SessionRow): Promise<AgentSession> {
    // Repaired only by the one allowed to write: while another process runs the session, its
    // unanswered calls are that run's calls in progress (and running it here is refused).
    const lease = await deps.store.leases.take(row.id);
    try {
      const journal = await deps.store.journal(row.id);
      const { history, count } = await storedHistory(deps.store, journal, row.id);
      const session = new AgentSession(deps, journal, row, history, count, 'resume');
      if (!refused(lease)) await session.answerInterrupted();
      return session;
    } finally {
      if (!refused(lease)) await lease.release();
    }
  }

  /**
   * Takes in what other processes added while they held the lease since this object last ran the
   * session (a REPL left open while the gateway answered in it): the run then goes on from the
   * history as stored, never from a stale copy. One statement when nothing changed.
   */
  private async catchUp(): Promise<void> {
    await this.journal.flush();
    if ((await this.deps.store.messageCount(this.id)) === this.stored) return;
    const { status, title } = await this.deps.store.get(this.id);
    Object.assign(this.row, { status, title });
    const { history, count } = await storedHistory(this.deps.store, this.journal, this.id);
    this.messages.splice(0, this.messages.length, ...history);
    this.stored = count;
    await this.answerInterrupted();
  }

  /**
   * Answers as interrupted the calls a crash left without results (servers reject a history with
   * unanswered calls); those of a paused run stay pending. Only the lease's holder may.
   */
  private async answerInterrupted(): Promise<void> {
    if (this.row.status === 'paused') return;
    for (const call of unansweredCalls(this.messages))
      this.append(toolResultMessage(call.id, false, INTERRUPTED));
    await this.journal.flush();
  }

  /** The context window this session budgets with. */
  get contextWindow(): number | undefined {
    return this.learnedWindow ?? this.deps.contextWindow;
  }

  /** Calls waiting for approval, when the last run paused. */
  get pending(): ToolCall[] {
    return this.row.status === 'paused' ? unansweredCalls(this.messages) : [];
  }

  /**
   * Adds a message to the run in progress at its next safe point (see SteeringQueue); with no run
   * going, the message waits for the next one, and comes before its task.
   */
  steer(text: string): void {
    this.steering.push(text);
  }

  /** Messages sent with `steer` and not yet added to the conversation. */
  get queued(): readonly string[] {
    return this.steering;
  }

  /** Runs the agent on `task` (or, with none, carries on from where the history stops), with any images given. */
  run(task: string | undefined, signal?: AbortSignal, images?: ImagePart[]): AsyncGenerator<AgentEvent> {
    return this.drive(task, signal, undefined, images);
  }

  /** Continues a paused run: the listed calls run, the other pending ones are declined. */
  resume(
    decisions: { approved: string[]; reason?: string },
    signal?: AbortSignal,
  ): AsyncGenerator<AgentEvent> {
    return this.drive(undefined, signal, resumeAnswers(this.pending, decisions));
  }

  /**
   * Runs `work` holding the session's run lease (src/store/run-lease.ts), with a signal that also
   * aborts when the lease is lost; undefined, with nothing done, when another holder runs it.
   */
  private async *leased<T>(
    signal: AbortSignal | undefined,
    work: (signal: AbortSignal) => AsyncGenerator<AgentEvent, T>,
  ): AsyncGenerator<AgentEvent, T | undefined> {
    const lease = await this.deps.store.leases.take(this.id);
    if (refused(lease)) {
      yield { type: 'done', reason: 'error', text: leaseRefusal(this.id, lease.heldBy), turns: 0 };
      return undefined;
    }
    try {
      await this.catchUp();
      return yield* work(signal ? AbortSignal.any([signal, lease.lost]) : lease.lost);
    } finally {
      await lease.release();
    }
  }

  private async *drive(
    task: string | undefined,
    signal: AbortSignal | undefined,
    answers: ReadonlyMap<string, ApprovalAnswer> | undefined,
    images?: ImagePart[],
  ): AsyncGenerator<AgentEvent> {
    const held = (s: AbortSignal) => this.driveHeld(task, s, answers, images);
    yield* traced(this.deps, this.id, this.leased(signal, held));
  }

  private async *driveHeld(
    task: string | undefined,
    signal: AbortSignal,
    answers: ReadonlyMap<string, ApprovalAnswer> | undefined,
    images?: ImagePart[],
  ): AsyncGenerator<AgentEvent> {
    if (!(yield* this.begin(task, signal))) return;
    const startContext = task === undefined ? [] : this.startContext.splice(0);
    const first = this.messages.length === 1 && this.steering.length === 0;
    const preface = yield* sessionPreface(this.deps.preface, task, first, signal);
    let turnStarted = performance.now();
    const turn = checkpointTurn(this.journal.state, this.stored, task);
    const checkpoint = this.deps.checkpoints?.turn(this.id, turn);
    try {
      yield* this.relay(
        runAgent({
          ...this.runSettings(),
          messages: this.messages,
          task,
          taskImages: images,
          preface,
          answers,
          signal,
          startContext,
          checkpoint,
        }),
        () => {
          turnStarted = performance.now();
        },
        () => turnStarted,
        checkpoint,
      );
    } finally {
      await checkpoint?.end();
    }
  }

  /** Passes the run's events on, storing what they carry (usage, full tool output, the final status). */
  private async *relay(
    events: AsyncGenerator<AgentEvent>,
    onTurnStart: () => void,
    turnStarted: () => number,
    checkpoint: TurnCheckpoints | undefined,
  ): AsyncGenerator<AgentEvent> {
    const { journal } = this;
    for await (const event of events) {
      if (event.type === 'turn_start') {
        // What the last step wrote is stored before the model is asked again.
        const unsaved = await this.saved();
        if (unsaved) return yield unsaved;
        onTurnStart();
      }
      if (event.type === 'usage') {
        journal.recordUsage({
          model: this.deps.llm.model,
          prompt: event.prompt,
          completion: event.completion,
          durationMs: performance.now() - turnStarted(),
          // The reply's assistant message is stored just before its usage is reported.
          ...(event.speed ? { speed: event.speed, seq: this.stored - 1 } : {}),
        });
      }
      if (event.type === 'tool_result' && event.display !== undefined) {
        journal.saveToolOutput(event.callId, event.display);
        yield { ...event, display: boundedDisplay(event.display, this.id, event.callId) };
        continue;
      }
      if (event.type === 'done') {
        this.setStatus(
          event.reason === 'paused' ? 'paused' : event.reason === 'error' ? 'error' : 'completed',
        );
        const unsaved = await this.saved();
        if (unsaved) return yield unsaved;
        // Whoever reads `done` may rewind at once: the turn's last checkpoint is kept before.
        await checkpoint?.end();
      }
      yield event;
    }
  }

  /**
   * The run's start: the title from its first task, the status, the session event and, once per
   * opened session, SessionStart. False when a SessionStart hook ended the run before the model is asked.
   */
  private async *begin(task: string | undefined, signal: AbortSignal): AsyncGenerator<AgentEvent, boolean> {
    if (task && !this.row.title) {
      this.row.title = task.replace(/\s+/g, ' ').trim().slice(0, 80);
      this.journal.update({ title: this.row.title });
    }
    this.setStatus('active');
    yield this.identity;
    if (!this.hooks || !this.startSource) return true;
    const started = await this.hooks.sessionStart(this.startSource, signal);
    this.startSource = undefined;
    this.startContext.push(...started.context);
    for (const message of started.notes) yield { type: 'warning', message };
    if (!started.stop) return true;
    // `continue: false`: the model is not asked; the reason is for the user only.
    this.setStatus('completed');
    const text = `A SessionStart hook stopped the run: ${started.stop}`;
    yield { type: 'done', reason: 'blocked', text, turns: 0 };
    return false;
  }

  /** What every run of this session runs with, whatever its task. */
  private runSettings(): Omit<RunAgentOptions, 'messages'> {
    const { deps, journal } = this;
    return {
      ...runDeps(deps),
      tools: this.tools,
      contextWindow: this.contextWindow,
      onContextWindow: (window) => {
        this.learnedWindow = window;
      },
      scratch: this.scratch,
      durable: journal.state,
      steering: {
        waiting: () => this.steering.length > 0,
        take: () => this.steering.splice(0),
      },
      onMessage: (message) => this.persist(message),
      onCompact: (history) => this.recordCompaction(history),
      onAudit: (entry) => journal.recordAudit(entry),
      hooks: this.hooks,
    };
  }

  /** Flushes the journal; a failure ends the run with the reason (the stored session stays resumable). */
  private async saved(): Promise<AgentEvent | undefined> {
    try {
      await this.journal.flush();
      return undefined;
    } catch (err) {
      return { type: 'done', reason: 'error', text: (err as Error).message, turns: 0, unsaved: true };
    }
  }

  private setStatus(status: SessionRow['status']): void {
    this.row.status = status;
    this.journal.update({ status, model: this.deps.llm.model });
  }

  /**
   * Ends what the session's tools keep running between calls (interpreters), waiting until their
   * processes are gone. Every surface calls it when it is done with the session; the session may
   * still run again afterwards, its tools then starting afresh.
   */
  async close(): Promise<void> {
    await this.scratch.end();
  }

  /**
   * Compacts the history now (/compact, `hearth sessions compact`). Rejects, with the reason for
   * the user, when a PreCompact hook says `continue: false`.
   */
  async compact(signal?: AbortSignal): Promise<CompactionResult> {
    const lease = await this.deps.store.leases.take(this.id);
    if (refused(lease)) throw new Error(leaseRefusal(this.id, lease.heldBy));
    try {
      await this.catchUp();
      return await this.compactHeld(signal ? AbortSignal.any([signal, lease.lost]) : lease.lost);
    } finally {
      await lease.release();
    }
  }

  private async compactHeld(signal: AbortSignal): Promise<CompactionResult> {
    const announced = await this.hooks?.preCompact('manual', signal);
    if (announced?.stop) throw new Error(`A PreCompact hook stopped the compaction: ${announced.stop}`);
    const result = await compactHistory(this.messages, {
      llm: this.deps.llm,
      state: this.journal.state,
      contextWindow: this.contextWindow || DEFAULT_CONTEXT_WINDOW,
      signal,
      summarize: true,
    });
    if (result.method === 'none') return result;
    this.messages.splice(0, this.messages.length, ...result.history);
    this.recordCompaction(result.history);
    await this.journal.flush();
    return result;
  }

  private recordCompaction(history: ChatMessage[]): void {
    const record: CompactionRecord = { fromSeq: this.stored, history };
    this.journal.state.set(COMPACTION_KEY, record);
  }

  private persist(message: ChatMessage): void {
    this.journal.appendMessage(message);
    this.stored++;
  }

  private append(message: ChatMessage): void {
    this.messages.push(message);
    this.persist(message);
  }
}
