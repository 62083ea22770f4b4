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
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { describeIgnored } from '../config/security.js';
import type { ChatMessage } from '../llm/types.js';
import type { EventLog } from '../store/event-log.js';
import type { QueuedTurn } from '../store/postgres/queue.js';
import { SessionNotFoundError } from '../store/rows.js';
import { openDatabase } from '../store/sqlite/database.js';
import type { PostgresStorage } from '../store/storage.js';
import { type TurnOrder, TurnQueue } from './turn-queue.js';
import type {
  CompactResult,
  OpenTurnSessions,
  TurnDetail,
  TurnResult,
  TurnSession,
  TurnSessions,
} from './turn-types.js';
import type { ClaimedTask, TaskOutcome } from './worker.js';

export interface TurnWorkerOptions {
  config: Config;
  /** The worker's Storage (the shared database), whose lease holder names the worker; its owner closes it. */
  storage: PostgresStorage;
  /** This machine's database (memory, usage); sessions are in the shared one. */
  dbPath: string;
  /** The folder the worker was started in: sessions there run with `config`. */
  workspace: string;
  /** The worker's lease: its session leases last as long, and a dead one's are awaited twice that. */
  leaseSeconds: number;
  /** The session hub the turns run in (the gateway's, `server/worker-sessions.ts`). */
  openSessions: OpenTurnSessions;
  say: (line: string) => void;
}

export interface TurnWorker {
  run(task: ClaimedTask & { turn: QueuedTurn }, signal: AbortSignal): Promise<TaskOutcome>;
  close(): Promise<void>;
}

/** Finished turns are kept this long (their reply is in the session), and looked for this often. */
const KEEP_TURNS_SECONDS = 24 * 3600;
const PRUNE_EVERY_MS = 3600_000;

/**
 * The gateway turns a `hearth worker` runs: a session hub of the worker's own over the shared
 * database, built at the first turn, in which each turn runs as a gateway would run it.
 */
export function turnWorker(options: TurnWorkerOptions): TurnWorker {
  const who = `hearth worker on ${hostname()} (pid ${process.pid})`;
  let opened: Promise<{ hub: TurnSessions; turns: TurnQueue }> | undefined;
  let prunedAt = Number.NEGATIVE_INFINITY;
  const onProblem = (message: string) => options.say(`problem: ${message}`);
  const open = async () => {
    const { config, dbPath, storage } = options;
    const events: EventLog = await storage.events({ writer: who, onProblem });
    const db = openDatabase(dbPath);
    const hub = options.openSessions({
      db,
      events,
      sessions: storage.sessions,
      storage,
      config,
      workspace: resolve(options.workspace),
      configFor: async (folder) => {
        const loaded = await loadConfig({
          workspace: folder,
          flags: [{ key: 'db_path', value: dbPath, name: 'hearth worker' }],
        });
        return { config: loaded.config, notes: describeIgnored(loaded.ignored) };
      },
    });
    return { hub, turns: new TurnQueue(storage.pool, storage.url, onProblem) };
  };
  return {
    async run(task, signal) {
      opened ??= open();
      opened.catch(() => {
        opened = undefined; // a database that was away may be back for the next turn
      });
      const { hub, turns } = await opened;
      if (Date.now() - prunedAt >= PRUNE_EVERY_MS) {
        prunedAt = Date.now();
        turns.prune(KEEP_TURNS_SECONDS).catch((err: unknown) => {
          onProblem(`could not forget old turns: ${(err as Error).message}`);
        });
      }
      return runQueuedTurn(hub, turns, task, {
        worker: who,
        leaseWaitMs: options.leaseSeconds * 2000,
        signal,
      });
    },
    async close() {
      const held = await opened?.catch(() => undefined);
      await held?.turns.close();
      await held?.hub.close();
    },
  };
}

interface QueuedTurnOptions {
  /** How this worker is named in the turn's row (as in its run leases: "hearth worker on gpu-box (pid 4242)"). */
  worker: string;
  /** How long to wait for another holder's run lease of the session (a dead worker's lapses). */
  leaseWaitMs: number;
  /** The worker stops: the turn is stopped, and goes back to the queue. */
  signal: AbortSignal;
}

/** Between looks at a lease another holder has. */
const LEASE_LOOK_MS = 500;

async function runQueuedTurn(
  hub: TurnSessions,
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
    const { status, detail } = hub.describe(err);
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
          ...(resumed ? {} : { text: turn.text, images: turn.images }),
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
    const { status, detail } = hub.describe(err);
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
async function obey(live: TurnSession, order: TurnOrder): Promise<boolean> {
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
async function leaseFree(hub: TurnSessions, id: string, options: QueuedTurnOptions): Promise<void> {
  const until = Date.now() + options.leaseWaitMs;
  for (;;) {
    const holder = await hub.store.leases.heldElsewhere(id);
    if (holder === undefined) return;
    if (Date.now() >= until || options.signal.aborted)
      throw new Error(`session ${id} is running in ${holder}; the turn waits for that run to end`);
    await new Promise((resolve) => setTimeout(resolve, LEASE_LOOK_MS));
  }
}
