/**
 * The shared work queue of several machines, in PostgreSQL. Claiming, retrying and waking workers
 * is graphile-worker's (a maintained queue; 0.16 is its last release for Node 20). What it does not
 * keep is ours, in tables beside its schema (src/store/postgres/migrations.ts): each worker
 * process's lease (graphile-worker releases a crashed worker's jobs only after four hours, so a
 * lease that lapses releases them at once, cluster/worker.ts), every claim, and one result per task (a
 * task re-run after its worker died completes once). The Storage hands it out over its pool
 * (`PostgresStorage.queue()`); the workers that run its tasks are in src/cluster/.
 */
import { randomUUID } from 'node:crypto';
import { Logger, makeWorkerUtils, type WorkerUtils } from 'graphile-worker';
import { inTransaction, type PgPool } from './connection.js';
import { underMigrationLock } from './migrations.js';

/** The task names workers register: one per set of tags, so graphile-worker matches tags itself. */
const TASK_PREFIX = 'hearth_agent';

export interface QueuedTask {
  task: string;
  /** Where it runs, as a path on the worker's machine. */
  workspace: string;
  model?: string;
  /** Only a worker with all of these tags takes it. */
  tags: string[];
  /**
   * The scheduled job and slot this task is (the scheduler's hand-off), for the worker's output;
   * `manual` for a run asked for by hand (`hearth jobs run`), at `slotAt`.
   */
  job?: { id: string; slotAt: number; manual?: boolean };
  /** Sessions to continue, the first that exists on the worker's machine (a job's `session_id`). */
  resume?: string[];
  /** A gateway's turn of a stored session (turn-queue.ts), run as the gateway would run it. */
  turn?: QueuedTurn;
}

/** What a gateway hands a worker to run in a session: a message, a continuation, or a compaction. */
export interface QueuedTurn {
  session: string;
  kind: 'message' | 'compact';
  /** Undefined: carry on from where the history stops (a paused run). */
  text?: string;
  images?: Array<{ mime_type: string; data: string }>;
  mode?: 'bounded' | 'deep_work';
  model?: string;
  /** Messages steered in too late for the session's turn before: taken before this one's text. */
  steers?: string[];
  /** Answers to the calls a paused run waits on, given before it carries on. */
  answers?: Array<{ callId: string; decision: 'once' | 'always' | 'deny'; reason?: string }>;
}

export interface TaskResult {
  key: string;
  status: 'ok' | 'failed';
  reason?: string;
  sessionId?: string;
  /** What the run returns beside its status (a queued turn's reply). */
  detail?: unknown;
  worker: string;
  host: string;
  promptTokens: number;
  completionTokens: number;
  finishedAt: string;
}

/** A `hearth worker` process whose lease is current: it takes tasks now. */
export interface LiveWorker {
  id: string;
  host: string;
  tags: string[];
}

export interface QueueView {
  pending: Array<{ key: string; task: string; tags: string[]; attempts: number; lockedBy?: string }>;
  done: TaskResult[];
  workers: LiveWorker[];
}

/** Silent: workers report through Hearth's own output, never graphile-worker's console logger. */
export const quietLogger = new Logger(() => () => undefined);

/** The task name for a set of tags (sorted, so the same set always names the same task). */
function taskName(tags: readonly string[]): string {
  const sorted = [...new Set(tags)].sort();
  return sorted.length === 0 ? TASK_PREFIX : `${TASK_PREFIX}:${sorted.join(',')}`;
}

/** Every task name a worker with these tags serves: one per subset (a worker has few tags). */
export function servedTaskNames(tags: readonly string[]): string[] {
  const unique = [...new Set(tags)].sort();
  if (unique.length > 8) throw new Error('A worker may have at most 8 tags.');
  const names: string[] = [];
  for (let mask = 0; mask < 1 << unique.length; mask++) {
    names.push(taskName(unique.filter((_, i) => mask & (1 << i))));
  }
  return names;
}

export class WorkQueue {
  private constructor(
    readonly pool: PgPool,
    private readonly utils: WorkerUtils,
  ) {}

  /**
   * Over the process's pool (the Storage's, whose migrations made Hearth's tables): creates
   * graphile-worker's schema when missing. The pool stays the Storage's.
   */
  static async open(pool: PgPool): Promise<WorkQueue> {
    try {
      // Making the utilities installs or updates graphile-worker's schema (so does its runner, which
      // then finds it done): one process at a time (migrations.ts).
      const utils = await underMigrationLock(pool, () =>
        makeWorkerUtils({ pgPool: pool, logger: quietLogger }),
      );
      return new WorkQueue(pool, utils);
    } catch (err) {
      throw new Error(`Cannot set up the work queue: ${(err as Error).message}`);
    }
  }

  /** Queues a task under a new key. */
  async add(task: QueuedTask): Promise<string> {
    const key = randomUUID();
    // A task that keeps failing is not retried for ever; one whose worker died is not a failure.
    await this.addOnce(key, task, 25);
    return key;
  }

  /**
   * Queues a task under `key` unless one with that key was ever queued (waiting, running or done):
   * Hearth's record of it and graphile-worker's job in one transaction (its SQL `add_job`). The
   * record is what makes it once: graphile-worker's own job key would queue the key again once its
   * job is done, or beside a job that is running. True when this call queued it.
   */
  async addOnce(key: string, task: QueuedTask, maxAttempts: number): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const inserted = await client.query(
        `insert into hearth_tasks (key, task, workspace, model, tags) values ($1, $2, $3, $4, $5)
         on conflict (key) do nothing`,
        [key, task.task, task.workspace, task.model ?? null, task.tags],
      );
      if (inserted.rowCount === 0) return false;
      if (task.turn) {
        await client.query('insert into hearth_turns (key, session_id) values ($1, $2)', [
          key,
          task.turn.session,
        ]);
      }
      // A session's turns share a graphile-worker queue, which runs its jobs one at a time, in order.
      await client.query(
        'select graphile_worker.add_job($1, $2::json, job_key => $3, max_attempts => $4, queue_name => $5)',
        [
          taskName(task.tags),
          JSON.stringify({ ...task, key }),
          key,
          maxAttempts,
          task.turn ? `hearth_session:${task.turn.session}` : null,
        ],
      );
      return true;
    });
  }

  /**
   * How these tasks ended, by key: the worker's result, or, for a task graphile-worker gave up on
   * (its worker threw at every attempt: no model server, a broken config), that as a failure.
   */
  async results(keys: string[]): Promise<Map<string, TaskResult>> {
    const found = new Map<string, TaskResult>();
    if (keys.length === 0) return found;
    const done = await this.pool.query('select * from hearth_task_results where key = any($1)', [keys]);
    for (const row of done.rows) found.set(String(row.key), toResult(row));
    const gaveUp = await this.pool.query(
      `select key, attempts, last_error, updated_at from graphile_worker.jobs
       where key = any($1) and attempts >= max_attempts and locked_at is null`,
      [keys.filter((key) => !found.has(key))],
    );
    for (const row of gaveUp.rows) {
      const error = String(row.last_error ?? 'no error recorded').split('\n')[0];
      found.set(String(row.key), {
        key: String(row.key),
        status: 'failed',
        reason: `the queue gave up after ${row.attempts} attempts: ${error}`,
        worker: '',
        host: '',
        promptTokens: 0,
        completionTokens: 0,
        finishedAt: new Date(row.updated_at).toISOString(),
      });
    }
    return found;
  }

  /**
   * Calls `listener` whenever a task's result is recorded (a trigger's NOTIFY, migration 2), on a
   * connection of its own. Resolves to a function that stops listening; `onLost` says the
   * connection broke (the caller polls meanwhile and listens again).
   */
  async watchResults(listener: (key: string) => void, onLost: () => void): Promise<() => Promise<void>> {
    const client = await this.pool.connect();
    let released = false;
    const release = (err?: Error) => {
      if (released) return;
      released = true;
      client.removeAllListeners('notification');
      client.release(err ?? true);
    };
    client.on('notification', (message) => listener(message.payload ?? ''));
    client.on('error', (err) => {
      release(err);
      onLost();
    });
    try {
      await client.query('listen hearth_task_done');
    } catch (err) {
      release(err as Error);
      throw err;
    }
    return async () => {
      await client.query('unlisten hearth_task_done').catch(() => undefined);
      release();
    };
  }

  /**
   * The workers taking tasks now (their lease is current, on the database's clock), those with all
   * of `tags` when given: who would run a task queued with them.
   */
  async workers(tags: readonly string[] = []): Promise<LiveWorker[]> {
    const rows = await this.pool.query(
      'select id, host, tags from hearth_workers where lease_until > now() and tags @> $1::text[] order by started_at, id',
      [[...tags]],
    );
    return rows.rows.map((row) => ({
      id: String(row.id),
      host: String(row.host),
      tags: row.tags as string[],
    }));
  }

  async view(limit = 50): Promise<QueueView> {
    const pending = await this.pool.query(
      `select t.key, t.task, t.tags, j.attempts, j.locked_by from hearth_tasks t
       left join graphile_worker.jobs j on j.key = t.key
       where not exists (select 1 from hearth_task_results r where r.key = t.key)
       order by t.queued_at limit $1`,
      [limit],
    );
    const done = await this.pool.query(
      'select * from hearth_task_results order by finished_at desc limit $1',
      [limit],
    );
    return {
      pending: pending.rows.map((row) => ({
        key: row.key,
        task: row.task,
        tags: row.tags,
        attempts: row.attempts ?? 0,
        ...(row.locked_by ? { lockedBy: row.locked_by } : {}),
      })),
      done: done.rows.map(toResult),
      workers: await this.workers(),
    };
  }

  /**
   * Deletes graphile-worker's queues no job uses any more: each session's turns have one, and
   * graphile-worker looks at every queue row when it fetches a job, so they must not pile up.
   */
  collectQueues(): Promise<void> {
    return this.utils.cleanup({ tasks: ['GC_JOB_QUEUES'] });
  }

  /** Releases the jobs of graphile-worker workers whose process is gone. */
  forceUnlock(graphileIds: string[]): Promise<void> {
    return graphileIds.length > 0 ? this.utils.forceUnlockWorkers(graphileIds) : Promise.resolve();
  }

  /** Releases graphile-worker's utilities; the pool stays the Storage's. */
  async close(): Promise<void> {
    await this.utils.release();
  }
}

function toResult(row: Record<string, unknown>): TaskResult {
  return {
    key: String(row.key),
    status: row.status === 'ok' ? 'ok' : 'failed',
    ...(row.reason ? { reason: String(row.reason) } : {}),
    ...(row.session_id ? { sessionId: String(row.session_id) } : {}),
    ...(row.detail != null ? { detail: row.detail } : {}),
    worker: String(row.worker),
    host: String(row.host),
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    finishedAt: new Date(row.finished_at as string).toISOString(),
  };
}
