import { randomBytes } from 'node:crypto';
import type { QueuedTask, TaskResult, WorkQueue } from '../store/postgres/queue.js';
import type { RunRow } from '../store/rows.js';
import type { SchedulerStorage } from '../store/scheduler-storage.js';
import { type Clock, sleep } from '../util/clock.js';
import type { JobDefinition } from './job-definitions.js';

/**
 * Scheduled runs a `hearth worker` runs instead of the scheduler's process: the slot is decided
 * and recorded here, exactly as for a local run (scheduler.ts), then handed to the shared
 * PostgreSQL queue, and its record waits for the worker's result.
 *
 * - Once per slot: the queue key is the job and the slot (`slotKey`), and the queue keeps a task
 *   per key for good (`WorkQueue.addOnce`). A scheduler that restarts between marking the run and
 *   queueing it queues it at its next pass; one that queued it already finds the key taken.
 * - The run stays `running` in the store while a worker has it, so the job's `overlap` policy and
 *   its missed-run accounting see it as they see a local run; a takeover leaves it alone (it is
 *   the worker's, not a process's here) and the new leader settles it.
 * - Results arrive by NOTIFY (a trigger on the results table) and are also polled at every pass,
 *   so a scheduler that was down or lost its connection picks up what came meanwhile.
 * - A manual run of such a job (`hearth jobs run ID`) goes the same way under a key of its own,
 *   queued at once rather than at the next pass, and whoever asked may wait for its result.
 */
export type RunQueue = Pick<WorkQueue, 'addOnce' | 'results' | 'watchResults' | 'close'>;

export interface QueueHandoffOptions {
  store: SchedulerStorage;
  /** Opens the shared queue on first need; undefined when no `storage` is configured. */
  openQueue?: () => Promise<RunQueue>;
  clock: Clock;
  /** A result may have arrived: the scheduler should pass again soon. */
  nudge: () => void;
  problem: (message: string) => void;
}

/** Attempts of a slot's task before the queue gives up (a worker that died counts as one). */
const SLOT_ATTEMPTS = 5;

/** How often one waiting for a result looks, should its notification be lost with a connection. */
const RESULT_POLL_MS = 5_000;

/** The slot's key in the queue: the same for every scheduler that decides it. */
function slotKey(jobId: string, slotAt: number): string {
  return `${SLOT_KEY_PREFIX}${jobId}:${new Date(slotAt).toISOString()}`;
}

const SLOT_KEY_PREFIX = 'job:';

/** A manual run's key: its own (a second manual run, here or elsewhere, is another task). */
function manualKey(jobId: string, at: number): string {
  return `${SLOT_KEY_PREFIX}${jobId}:manual:${new Date(at).toISOString()}:${randomBytes(4).toString('hex')}`;
}

export class QueueHandoff {
  private queue: Promise<RunQueue> | undefined;
  /** Keys this process knows are in the queue (the rest are queued again: `addOnce` is idempotent). */
  private readonly queued = new Set<string>();
  private unwatch: (() => Promise<void>) | undefined;
  private watching: Promise<void> | undefined;
  /** Those waiting for one task's result (`waitFor`), by key. */
  private readonly waiters = new Map<string, () => void>();

  constructor(private readonly options: QueueHandoffOptions) {}

  /**
   * Hands a queued run to the queue: `running` from now on, with its key. Without a shared
   * database the run fails at once, saying what to set. False when the run was not queued any more.
   */
  async handOff(run: RunRow, owner: string): Promise<boolean> {
    const { store, clock } = this.options;
    const now = clock.now();
    if (!this.options.openQueue) {
      if (!(await store.startRun(run.id, owner, now, 0))) return false;
      await store.finishRun(
        run.id,
        owner,
        {
          status: 'failed',
          reason:
            'the job runs on the queue (run_on: queue, or tags), and no shared database is configured: set storage: postgres://... or HEARTH_DATABASE_URL',
        },
        now,
      );
      return true;
    }
    const key =
      run.kind === 'manual' ? manualKey(run.jobId!, now) : slotKey(run.jobId!, run.slotAt ?? run.createdAt);
    return store.handOffRun(run.id, owner, now, key);
  }

  /** Queues a handed-off run now, rather than at the next pass (a manual run). */
  async queueNow(run: RunRow, job: JobDefinition, previousSession: string | undefined): Promise<void> {
    const queue = await this.open();
    await queue.addOnce(run.queueKey!, task(run, job, previousSession), SLOT_ATTEMPTS);
    this.queued.add(run.queueKey!);
  }

  /**
   * Waits for the result of the task under `key` and records it in the run. Resolves to false
   * when `signal` ended the wait first (the run stays with the worker; a pass records it later).
   */
  async waitFor(key: string, signal: AbortSignal): Promise<boolean> {
    const { store, clock } = this.options;
    const queue = await this.open();
    try {
      while (!signal.aborted) {
        const told = new AbortController();
        this.waiters.set(key, () => told.abort());
        // Listening (again, after a lost connection) before looking: a result cannot slip between.
        await this.watch(queue);
        const result = (await queue.results([key])).get(key);
        if (result) {
          await store.finishHandedOff(key, outcome(result), clock.now());
          this.queued.delete(key);
          return true;
        }
        await sleep(RESULT_POLL_MS, AbortSignal.any([told.signal, signal]), clock);
      }
      return false;
    } finally {
      this.waiters.delete(key);
    }
  }

  /**
   * Queues what was handed off and not yet queued, listens for results, and records those that
   * came. Returns the runs it finished. A database that does not answer is a problem, not a
   * failure of the runs: they wait for the next pass.
   */
  async settle(
    jobs: readonly JobDefinition[],
    previousSession: (jobId: string) => Promise<string | undefined>,
  ): Promise<RunRow[]> {
    const { store, clock } = this.options;
    const open = await store.handedOff();
    if (open.length === 0 && !this.queue) return [];
    const finished: RunRow[] = [];
    try {
      const queue = await this.open();
      // Listening before queueing: a result can then not come unannounced.
      await this.watch(queue);
      for (const run of open) {
        if (this.queued.has(run.queueKey!)) continue;
        const job = jobs.find((j) => j.id === run.jobId);
        if (!job) {
          await store.finishHandedOff(
            run.queueKey!,
            { status: 'failed', reason: `job "${run.jobId}" was removed before its run was queued` },
            clock.now(),
          );
          finished.push((await store.get(run.id))!);
          continue;
        }
        await queue.addOnce(run.queueKey!, task(run, job, await previousSession(job.id)), SLOT_ATTEMPTS);
        this.queued.add(run.queueKey!);
      }
      const results = await queue.results(open.map((run) => run.queueKey!));
      for (const run of open) {
        const result = results.get(run.queueKey!);
        if (!result) continue;
        if (await store.finishHandedOff(run.queueKey!, outcome(result), clock.now()))
          finished.push((await store.get(run.id))!);
        this.queued.delete(run.queueKey!);
      }
    } catch (err) {
      this.options.problem(`the shared queue did not answer: ${(err as Error).message}`);
    }
    return finished;
  }

  private open(): Promise<RunQueue> {
    this.queue ??= this.options.openQueue!().catch((err: unknown) => {
      this.queue = undefined;
      throw err;
    });
    return this.queue;
  }

  /** Listens for results while this process schedules; listens again after a lost connection. */
  private watch(queue: RunQueue): Promise<void> {
    if (this.unwatch) return Promise.resolve();
    this.watching ??= queue
      .watchResults(
        (key) => {
          // Every task's result is announced; only a job's concerns the scheduler.
          if (!key.startsWith(SLOT_KEY_PREFIX)) return;
          this.waiters.get(key)?.();
          this.options.nudge();
        },
        () => {
          this.unwatch = undefined;
        },
      )
      .then(
        (unwatch) => {
          this.unwatch = unwatch;
        },
        (err: unknown) => this.options.problem(`cannot listen for results: ${(err as Error).message}`),
      )
      .finally(() => {
        this.watching = undefined;
      });
    return this.watching;
  }

  async close(): Promise<void> {
    await this.watching;
    await this.unwatch?.();
    this.unwatch = undefined;
    const queue = await this.queue?.catch(() => undefined);
    this.queue = undefined;
    this.queued.clear();
    await queue?.close();
  }
}

function task(run: RunRow, job: JobDefinition, previous: string | undefined): QueuedTask {
  const resume = [job.sessionId, job.sessionId ? previous : undefined].filter((s): s is string => !!s);
  return {
    task: run.prompt,
    workspace: run.workspace ?? job.workspace,
    ...(job.model ? { model: job.model } : {}),
    tags: job.tags,
    job: {
      id: job.id,
      slotAt: run.slotAt ?? run.createdAt,
      ...(run.kind === 'manual' ? { manual: true } : {}),
    },
    ...(resume.length ? { resume } : {}),
  };
}

function outcome(result: TaskResult) {
  return {
    status: result.status,
    ...(result.reason ? { reason: result.reason } : {}),
    ...(result.sessionId ? { sessionId: result.sessionId } : {}),
    promptTokens: result.promptTokens,
    completionTokens: result.completionTokens,
    ...(result.worker ? { worker: result.worker, host: result.host } : {}),
  };
}
