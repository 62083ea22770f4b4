import type { DoneEvent } from '../agent/events.js';
import { blindNote } from '../agent/loop.js';
import type { CompactResult, TurnResult } from '../cluster/turn-types.js';
import { type RunFacts, type RunMode, usageJson, wireRun } from '../cluster/wire.js';
import type { ApprovalAnswer } from '../permissions/gate.js';
import { readPlan, readTodos, renderTodos } from '../tools/tracking/index.js';
import type { SessionState } from '../tools/types.js';
import type { AnswerOutcome } from './approvals.js';
import { showingStored } from './history.js';
import type { OpenedAgent, SessionHost } from './live-session.js';
import { GatewayError } from './problem.js';
import { type Job, type Running, SessionActor } from './session-actor.js';

/** `ready`: the item's agent session is open and takes steered messages itself. */
interface LocalRunning extends Running {
  ready?: boolean;
}

type MessageJob = Extract<Job, { kind: 'message' }>;

/**
 * A session whose turns run in this process: each item opens (or reuses) the session's agent
 * session, runs it, and records its events in the wire's form, with the todo list and plan as
 * they change. A `hearth worker` runs the turns queued to it in sessions of this kind too.
 */
export class LocalSession extends SessionActor<LocalRunning> {
  protected readonly dispatches = false;
  private agent: OpenedAgent | undefined;
  /** The session's `updatedAt` after our last run: a different one means another process ran it. */
  private stamp: number | undefined;
  private tasks: string;

  constructor(id: string, host: SessionHost, state: SessionState, writer?: string) {
    super(id, host, state, writer);
    this.tasks = this.taskKey();
  }

  get unsteered(): readonly string[] {
    return [...(this.running?.early ?? []), ...(this.agent?.session.queued ?? [])];
  }

  protected begin(controller: AbortController): LocalRunning {
    return { controller, early: [] };
  }

  protected steerRunning(running: LocalRunning, text: string): void {
    if (!running.ready || !this.agent) running.early.push(text);
    else this.agent.session.steer(text);
  }

  protected abortRunning(running: LocalRunning): void {
    running.controller.abort();
  }

  protected answerPaused(callId: string, answer: ApprovalAnswer): AnswerOutcome {
    this.approvals.expect(callId);
    const outcome = this.approvals.answer(callId, answer);
    this.send({});
    return outcome;
  }

  /** The tools' interpreters end with the session's time here (idle, cleared, the gateway stopping). */
  protected override async release(): Promise<void> {
    await this.agent?.session.close();
    this.agent = undefined;
  }

  protected override async ended(): Promise<void> {
    this.stamp = await this.lastUpdate();
  }

  protected async execute(
    job: Job,
    _before: number,
    signal: AbortSignal,
  ): Promise<TurnResult | CompactResult> {
    const result =
      job.kind === 'message' ? await this.runTurn(job, signal) : await this.runCompaction(signal);
    // Settled once its events are stored and sent, so a stream that ends with it has them all.
    await this.recorder.flush();
    return result;
  }

  private async lastUpdate(): Promise<number | undefined> {
    try {
      return (await this.host.store.get(this.id)).updatedAt;
    } catch {
      return undefined; // deleted meanwhile
    }
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

  private runTurn(job: MessageJob, signal: AbortSignal): Promise<TurnResult> {
    return showingStored(this.host.store, this.recorder, () => this.turn(job, signal));
  }

  private async turn(job: MessageJob, signal: AbortSignal): Promise<TurnResult> {
    const mode = job.mode ?? this.mode;
    const images = job.images?.length ? job.images : undefined;
    if (job.text !== undefined)
      this.record({ type: 'user_message', text: job.text, ...(images ? { images } : {}) });
    const { session, facts: known, vision } = await this.prepare(job.model, mode);
    // Said before the run, not after a text-only answer that ignored the picture.
    if (images && vision === false) throw new GatewayError(422, blindNote(known.model));
    const facts: RunFacts = { ...known, mode, usage: { prompt: 0, completion: 0 } };
    const wire = wireRun(facts);
    let done: DoneEvent | undefined;
    const parts = images?.map((image) => ({ mimeType: image.mime_type, base64: image.data }));
    for await (const event of session.run(job.text, signal, parts)) {
      if (event.type === 'approval_request') {
        this.approvals.expect(event.call.id);
      } else if (event.type === 'done') {
        done = event;
      }
      this.record(wire(event));
      if (event.type === 'tool_result') this.reportTasks();
    }
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
}
