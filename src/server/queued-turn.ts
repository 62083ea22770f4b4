/**
 * A worker's side of a gateway turn queued to it (src/cluster/turn-queue.ts): the turn runs in a
 * session hub of the worker's own, exactly as a gateway runs it (the same live session, agent
 * session, approvals and wire events, recorded in the shared log), and orders sent to any gateway
 * (steer, abort, approvals' answers) reach it through the database.
 *
 * A worker that dies mid-turn leaves its session's run lease to lapse, and the queue hands the
 * turn to another worker, which waits for the lease. That worker does not start the turn over:
 * the agent loop stores every step as it goes, and running the message again would repeat the
 * tool calls whose results are stored (commands, edits: side effects). It carries on from the
 * stored history instead; a call that was under way when the worker died is answered to the model
 * as interrupted (AgentSession.open), so the model decides whether to make it again.
 */

import type { TurnOrder, TurnQueue } from '../cluster/turn-queue.js';
import type { QueuedTurn } from '../cluster/work-queue.js';
import type { ClaimedTask, TaskOutcome } from '../cluster/worker.js';
import type { ChatMessage } from '../llm/types.js';
import { SessionNotFoundError } from '../store/rows.js';
import type { SessionHub } from './hub.js';
import type { CompactResult, LiveSession, TurnResult } from './live-session.js';
import { describeError } from './problem.js';
import type { ImageInput } from './schemas.js';
import type { TurnDetail } from './turn-relay.js';

export interface QueuedTurnOptions {
  /** How this worker is named in the turn's row (as in its run leases: "hearth worker on gpu-box (pid 4242)"). */
  worker: string;
  /** How long to wait for another holder's run lease of the session (a dead worker's lapses). */
  leaseWaitMs: number;
  /** The worker stops: the turn is stopped, and goes back to the queue. */
  signal: AbortSignal;
  onProblem: (message: string) => void;
}

/** Between looks at a lease another holder has. */
const LEASE_LOOK_MS = 500;

export async function runQueuedTurn(
  hub: SessionHub,
  turns: TurnQueue,
  task: ClaimedTask & { turn: QueuedTurn },
  options: QueuedTurnOptions,
): Promise<TaskOutcome> {
  const { turn } = task;
  const id = turn.session;
  if (await turns.behindEarlier(task.key, id))
    throw new Error(`an earlier turn of session ${id} is to run first`);
  await leaseFree(hub, id, options);
  let history: ChatMessage[];
  try {
    history = await hub.store.messages(id);
  } catch (err) {
    // Deleted since it was queued: an answer, not something to try again.
    if (!(err instanceof SessionNotFoundError)) throw err;
    const { status, detail } = describeError(err);
    return { status: 'failed', reason: detail, detail: { error: { status, detail } } satisfies TurnDetail };
  }
  const messages = history.length;
  const start = await turns.start(task.key, options.worker, { messages, seq: await hub.events.lastSeq(id) });
  // Stopped before any worker started it: its result is recorded already, and nothing is run.
  if (!start) return { status: 'failed', reason: 'taken back before it started', sessionId: id };
  const live = await hub.session(id);
  // Answers given to a gateway while the run was paused: this worker's run asks, and finds them.
  for (const { callId, ...answer } of turn.answers ?? []) {
    live.approvals.expect(callId);
    live.approvals.answer(callId, answer);
  }
  // A try after a worker died: its message is stored once, and the run carries on (header).
  const resumed = start.attempt > 1 && messages > start.messagesBefore;
  const queued =
    turn.kind === 'compact'
      ? live.compact()
      : live.send({
          // Images the gateway checked against its schema before it queued them.
          ...(resumed ? {} : { text: turn.text, images: turn.images as ImageInput[] | undefined }),
          mode: turn.mode,
          model: turn.model,
        });
  // Orders are handed over again at every try; steers an earlier try took are stored already.
  const taken = resumed ? steersTaken(history.slice(start.messagesBefore), turn.text) : [];
  const fresh = (text: string) => {
    const at = taken.indexOf(text);
    if (at >= 0) taken.splice(at, 1);
    return at < 0;
  };
  // Steered in too late for the session's last turn: taken before this one's message, as a run
  // here takes what was steered in while nothing ran.
  for (const text of turn.steers ?? []) if (fresh(text)) void live.steer(text);
  // Steers that came once the run was over: they wait for the session's next turn.
  const late: string[] = [];
  const unfollow = turns.follow(task.key, async (order) => {
    if (order.kind === 'steer' && !fresh(order.text)) return;
    if (!(await obey(live, order)) && order.kind === 'steer') late.push(order.text);
  });
  // Whether the worker's stop cut the run short: else the turn is over, stop or not, and a retry
  // would ask the model again after its last answer.
  let cut = false;
  const stop = () => {
    cut = live.busy;
    void live.abort();
  };
  options.signal.addEventListener('abort', stop, { once: true });
  try {
    const result: TurnResult | CompactResult = await queued.result;
    if (cut && 'reason' in result && result.reason !== 'aborted') cut = false;
    // Steered in too late for this run: to the session's next turn, as a local run's would go.
    // One queued already takes them as orders; else the gateway sends them with the next it queues.
    const left = [...live.unsteered, ...late];
    const carried = left.length === 0 || (await turns.carry(task.key, id, left));
    const usage = 'usage' in result ? result.usage : undefined;
    return {
      status: 'ok',
      sessionId: id,
      complete: !cut,
      detail: { result, ...(carried ? {} : { unsteered: left }) } satisfies TurnDetail,
      promptTokens: usage?.prompt_tokens ?? 0,
      completionTokens: usage?.completion_tokens ?? 0,
    };
  } catch (err) {
    const { status, detail } = describeError(err);
    return { status: 'failed', reason: detail, sessionId: id, detail: { error: { status, detail } } };
  } finally {
    unfollow();
    options.signal.removeEventListener('abort', stop);
    // Cut short: the turn goes back to the queue and stays open for the worker that takes it up.
    if (!cut) await turns.finish(task.key);
  }
}

/**
 * The user messages an earlier try stored, but for the turn's own message (`own`, which may be
 * stored with context added after it): its steers.
 */
function steersTaken(since: ChatMessage[], own: string | undefined): string[] {
  const said = since
    .filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : ''));
  const mine = own === undefined ? -1 : said.findIndex((text) => text.startsWith(own));
  if (mine >= 0) said.splice(mine, 1);
  return said;
}

/** Carries out an order sent to the turn through any gateway; false when nothing ran to take it. */
async function obey(live: LiveSession, order: TurnOrder): Promise<boolean> {
  try {
    if (order.kind === 'steer') return await live.steer(order.text);
    if (order.kind === 'abort') return await live.abort();
    await live.answer(order.callId, {
      decision: order.decision,
      ...(order.reason ? { reason: order.reason } : {}),
    });
    return true;
  } catch {
    // An order for a turn that has ended meanwhile.
    return false;
  }
}

/**
 * Waits until no other process holds the session's run lease; throws (the queue tries the turn
 * again later) when it is still held after `leaseWaitMs`.
 */
async function leaseFree(hub: SessionHub, id: string, options: QueuedTurnOptions): Promise<void> {
  const until = Date.now() + options.leaseWaitMs;
  for (;;) {
    const holder = await hub.store.leases.heldElsewhere(id);
    if (holder === undefined) return;
    if (Date.now() >= until || options.signal.aborted)
      throw new Error(`session ${id} is running in ${holder}; the turn waits for that run to end`);
    await new Promise((resolve) => setTimeout(resolve, LEASE_LOOK_MS));
  }
}
