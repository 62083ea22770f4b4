/**
 * The gateway's side of turns run by `hearth worker`s (src/cluster/turn-queue.ts). With
 * `gateway.turns: workers` a live session hands each message, continuation and compaction to the
 * queue and waits for its result; with a shared database, whatever the setting, steer, abort and
 * approvals for a session a worker runs are sent on to that worker. The worker records the turn's
 * events in the shared log, so this gateway's watchers see them as they happen.
 */

import type { RunningTurn, TurnOrder, TurnQueue } from '../cluster/turn-queue.js';
import type { TurnDetail } from '../cluster/turn-types.js';
import type { EventLog } from '../store/event-log.js';
import type { QueuedTurn, TaskResult } from '../store/postgres/queue.js';
import type { AnswerOutcome } from './approvals.js';
import { GatewayError } from './problem.js';

/** Rows read per query while looking for an approval's request. */
const PAGE = 500;

export class TurnRelay {
  constructor(
    private readonly turns: TurnQueue,
    readonly options: {
      /** Messages, continuations and compactions go to workers (`gateway.turns: workers`). */
      dispatch: boolean;
      /** Only workers with these tags take them (`gateway.turn_tags`). */
      tags: string[];
    },
  ) {}

  get dispatches(): boolean {
    return this.options.dispatch;
  }

  /** Queues a turn of a session stored in `workspace`; resolves to its key. */
  queue(turn: QueuedTurn, workspace: string): Promise<string> {
    const description =
      turn.kind === 'compact'
        ? `compact session ${turn.session}`
        : (turn.text ?? `continue session ${turn.session}`);
    return this.turns.add(turn, { workspace, tags: this.options.tags, description });
  }

  /**
   * The reply of turn `key` once a worker recorded it, with the messages steered in too late for
   * it. A failure is thrown as the gateway would have thrown it running the turn itself; `signal`
   * stops the waiting (not the turn).
   */
  async outcome<T>(key: string, signal: AbortSignal): Promise<{ reply: T; unsteered: string[] }> {
    const stopped = new Promise<never>((_, reject) => {
      const stop = () =>
        reject(
          new GatewayError(503, `The gateway stopped waiting for turn ${key}; it goes on in the worker.`),
        );
      if (signal.aborted) stop();
      signal.addEventListener('abort', stop, { once: true });
    });
    stopped.catch(() => undefined);
    const result = await Promise.race([this.turns.result(key), stopped]);
    return replyOf<T>(result);
  }

  /**
   * What to tell the people watching when no live worker could take the turns queued here: they
   * wait in the queue until one starts, which nothing else would show. Undefined when one could.
   */
  async unattended(): Promise<string | undefined> {
    if ((await this.turns.takers(this.options.tags)) > 0) return undefined;
    const tags = this.options.tags.join(',');
    return tags
      ? `No hearth worker with the tags ${tags} is running: this turn waits in the queue until one starts (hearth worker --tags ${tags}).`
      : 'No hearth worker is running: this turn waits in the queue until one starts (hearth worker).';
  }

  /** Takes back a turn no worker has started, its reply `detail`; false when one has (see TurnQueue). */
  withdraw(key: string, detail: TurnDetail): Promise<boolean> {
    return this.turns.withdraw(key, detail);
  }

  /** The turn a worker runs in `session` now; undefined when none. */
  running(session: string): Promise<RunningTurn | undefined> {
    return this.turns.running(session);
  }

  order(key: string, order: TurnOrder): Promise<void> {
    return this.turns.order(key, order);
  }

  close(): Promise<void> {
    return this.turns.close();
  }

  /**
   * Sends an approval's answer to the worker running `turn`, when the turn asked for it and it is
   * not answered yet (read from the session's events since the turn started).
   */
  async answer(
    events: EventLog,
    session: string,
    turn: RunningTurn,
    order: Extract<TurnOrder, { kind: 'answer' }>,
  ): Promise<AnswerOutcome> {
    let asked = false;
    for (let seq = turn.startedSeq ?? 0; ; ) {
      const rows = await events.since(session, seq, PAGE);
      for (const row of rows) {
        if (row.type !== 'approval_request' && row.type !== 'approval_resolved') continue;
        if ((JSON.parse(row.body) as { tool_call_id?: string }).tool_call_id !== order.callId) continue;
        if (row.type === 'approval_resolved') return 'already';
        asked = true;
      }
      if (rows.length < PAGE) break;
      seq = rows.at(-1)!.seq;
    }
    if (!asked) return 'unknown';
    await this.order(turn.key, order);
    return 'accepted';
  }
}

function replyOf<T>(result: TaskResult): { reply: T; unsteered: string[] } {
  const detail = result.detail as TurnDetail | undefined;
  if (detail && 'result' in detail) return { reply: detail.result as T, unsteered: detail.unsteered ?? [] };
  if (detail && 'error' in detail) {
    throw new GatewayError(detail.error.status as 500, detail.error.detail);
  }
  throw new GatewayError(502, `The worker could not run the turn: ${result.reason ?? 'no reason given'}`);
}
