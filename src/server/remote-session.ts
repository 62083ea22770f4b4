import type { RunningTurn } from '../cluster/turn-queue.js';
import type { CompactResult, TurnResult } from '../cluster/turn-types.js';
import { usageJson } from '../cluster/wire.js';
import type { ApprovalAnswer } from '../permissions/gate.js';
import type { AnswerOutcome } from './approvals.js';
import { type Job, type Running, SessionActor } from './session-actor.js';

/**
 * `turn`: the queued turn a worker runs for the item, with `unstarted`, its reply should it be
 * taken back before a worker started it; `stopAsked`: a stop that came before it was queued.
 */
interface RemoteRunning extends Running {
  turn?: RunningTurn;
  unstarted?: TurnResult;
  stopAsked?: boolean;
}

/**
 * A session whose turns `hearth worker`s run (`gateway.turns: workers`): each item is queued to
 * the workers through the relay and its reply awaited; the worker records the turn's events in
 * the shared log, which reach this session's watchers from there. Steer, abort and answers go on
 * to the worker through the database.
 */
export class RemoteSession extends SessionActor<RemoteRunning> {
  protected readonly dispatches = true;
  /** Messages steered in too late for the last turn, sent with the next one. */
  private readonly leftover: string[] = [];

  get unsteered(): readonly string[] {
    return [...(this.running?.early ?? [])];
  }

  protected begin(controller: AbortController): RemoteRunning {
    return { controller, early: [] };
  }

  /** Only before its turn is queued (after that, orders go to the worker): sent once it is. */
  protected steerRunning(running: RemoteRunning, text: string): void {
    running.early.push(text);
  }

  /**
   * Stopped once its turn is known (`execute`). Aborting the controller would only stop this
   * gateway's waiting, and the turn would run all the same.
   */
  protected abortRunning(running: RemoteRunning): void {
    running.stopAsked = true;
  }

  /** A worker runs the rest: the answer goes with the turn, to that worker's approvals. */
  protected answerPaused(callId: string, answer: ApprovalAnswer): AnswerOutcome {
    this.send({ answers: [{ callId, ...answer }] });
    return 'accepted';
  }

  protected override runningTurn(): RunningTurn | undefined {
    return this.running?.turn;
  }

  /**
   * A turn queued from here that no worker started yet is taken back and never runs (its watchers
   * are told it stopped); otherwise the worker running it is told to stop.
   */
  protected override async stopForwarded(turn: RunningTurn): Promise<void> {
    const unstarted = this.running?.turn?.key === turn.key ? this.running.unstarted : undefined;
    if (unstarted && (await this.host.remote!.withdraw(turn.key, { result: unstarted }))) {
      const { session_id, response, ...done } = unstarted;
      this.record({ type: 'done', ...done });
      return;
    }
    await super.stopForwarded(turn);
  }

  /** A worker running the turn recorded its failure; one this gateway stopped waiting for goes on. */
  protected override async failed(err: unknown): Promise<void> {
    if (!this.running?.turn) await super.failed(err);
    else await this.recorder.feed.sync().catch(() => undefined);
  }

  /** Queues the job to the workers and waits for its reply, its events sent to the watchers here. */
  protected async execute(
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
    // Settled once the worker's events are sent here, so a stream that ends with it has them all.
    await this.recorder.feed.sync();
    return reply;
  }
}
