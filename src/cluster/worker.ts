/**
 * `hearth worker`: runs queued agent tasks on this machine until stopped. graphile-worker claims
 * them; this file keeps the process's lease (on the lease primitive, store/leases.ts: renewed
 * every third of it, on the database server's clock) and, at each renewal, releases the claims of
 * processes whose lease lapsed, so a killed worker's task goes to another within a lease, not after
 * graphile-worker's own four-hour timeout. A process that finds its own lease gone (the database was
 * away longer than the lease) stops its tasks and starts over, since another worker may have them.
 */

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { type Runner, run as runGraphile, type Task } from 'graphile-worker';
import { Lease } from '../store/leases.js';
import { isConnectionError, type PgPool } from '../store/postgres/connection.js';
import { type QueuedTask, quietLogger, servedTaskNames, WorkQueue } from '../store/postgres/queue.js';
import type { RunOutcome } from '../store/rows.js';

/** A task as the runner gets it: `key` names it in the results. */
export type ClaimedTask = QueuedTask & { key: string };

/**
 * How a task ended; `detail` is kept with its result for whoever waits on it (a gateway).
 * `complete`: it ran to its end though the worker was stopped meanwhile, so its result stands.
 */
export type TaskOutcome = RunOutcome & { detail?: unknown; complete?: boolean };

export type TaskRunner = (task: ClaimedTask, signal: AbortSignal) => Promise<TaskOutcome>;

export type WorkerEvent =
  | { type: 'started'; worker: string; tags: string[]; concurrency: number }
  | { type: 'claimed'; key: string; task: string; job?: ClaimedTask['job'] }
  | { type: 'finished'; key: string; status: 'ok' | 'failed'; reason?: string; duplicate: boolean }
  | { type: 'released'; workers: string[] }
  | { type: 'problem'; message: string };

export interface WorkerOptions {
  /** The process's pool (its Storage's): graphile-worker runs on it too. */
  pool: PgPool;
  run: TaskRunner;
  concurrency?: number;
  tags?: string[];
  /** Seconds without renewal after which a worker counts as dead and its tasks go to others. */
  leaseSeconds?: number;
  onEvent?: (event: WorkerEvent) => void;
  /** Stops the worker: running tasks are interrupted and handed back to the queue. */
  signal?: AbortSignal;
}

/** Tries of a task's query over a lost connection, half a second apart. */
const PATIENT_ATTEMPTS = 20;

/** A claim younger than this whose graphile id no lease lists yet is a worker still registering it. */
const REGISTER_GRACE_SECONDS = 5;

export async function runWorker(options: WorkerOptions): Promise<void> {
  const tags = [...new Set(options.tags ?? [])].sort();
  const names = servedTaskNames(tags);
  const concurrency = options.concurrency ?? 1;
  const leaseSeconds = options.leaseSeconds ?? 30;
  const emit = options.onEvent ?? (() => undefined);
  const queue = await WorkQueue.open(options.pool);
  try {
    while (!options.signal?.aborted) {
      await oneLease(queue, { ...options, tags, names, concurrency, leaseSeconds, emit });
    }
  } finally {
    await queue.close().catch(() => undefined);
  }
}

interface LeaseOptions extends WorkerOptions {
  tags: string[];
  names: string[];
  concurrency: number;
  leaseSeconds: number;
  emit: (event: WorkerEvent) => void;
}

/** One registration: runs until the worker is stopped or its lease is lost. */
async function oneLease(queue: WorkQueue, o: LeaseOptions): Promise<void> {
  const id = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const host = hostname();
  const lease = workerLease(queue, id, host, o);
  await lease.acquire();
  const tasks = new AbortController();
  const stop = () => tasks.abort();
  o.signal?.addEventListener('abort', stop, { once: true });
  const handler: Task = async (payload) => {
    const task = payload as ClaimedTask;
    const query = patient(queue, tasks.signal);
    await query(`insert into hearth_task_claims (key, worker) values ($1, $2)`, [task.key, id]);
    o.emit({ type: 'claimed', key: task.key, task: task.task, ...(task.job ? { job: task.job } : {}) });
    const done = await query(`select 1 from hearth_task_results where key = $1`, [task.key]);
    if (done.rowCount) return;
    let outcome: TaskOutcome;
    try {
      outcome = await o.run(task, tasks.signal);
    } catch (err) {
      // Not the task's fault (no model server, a broken config): graphile-worker retries it later.
      o.emit({ type: 'problem', message: `${task.key}: ${(err as Error).message}; it will be tried again` });
      throw err;
    }
    // Interrupted by a stop or a lost lease: the task goes back to the queue for another worker.
    if (tasks.signal.aborted && !outcome.complete) throw new Error('interrupted: the worker stopped');
    const inserted = await query(
      `insert into hearth_task_results (key, status, reason, session_id, worker, host, prompt_tokens, completion_tokens, detail)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9) on conflict (key) do nothing`,
      [
        task.key,
        outcome.status,
        outcome.reason ?? null,
        outcome.sessionId ?? null,
        id,
        host,
        outcome.promptTokens ?? 0,
        outcome.completionTokens ?? 0,
        outcome.detail === undefined ? null : JSON.stringify(outcome.detail),
      ],
    );
    o.emit({
      type: 'finished',
      key: task.key,
      status: outcome.status,
      ...(outcome.reason ? { reason: outcome.reason } : {}),
      duplicate: inserted.rowCount === 0,
    });
  };
  let runner: Runner | undefined;
  const lostLease = new Promise<string>((resolve) => {
    lease.lost.addEventListener(
      'abort',
      () => resolve((lease.lost.reason as Error).message.replace(/\.$/, '')),
      {
        once: true,
      },
    );
  });
  try {
    runner = await runGraphile({
      pgPool: o.pool,
      concurrency: o.concurrency,
      noHandleSignals: true,
      pollInterval: 1000,
      logger: quietLogger,
      taskList: Object.fromEntries(o.names.map((name) => [name, handler])),
    });
    runner.events.on('worker:create', ({ worker }) => {
      void queue.pool
        .query(`update hearth_workers set graphile_ids = array_append(graphile_ids, $2) where id = $1`, [
          id,
          worker.workerId,
        ])
        .catch(() => undefined);
    });
    runner.events.on('pool:listen:error', ({ error }) => o.emit({ type: 'problem', message: String(error) }));
    o.emit({ type: 'started', worker: id, tags: o.tags, concurrency: o.concurrency });
    const stopped = new Promise<string | undefined>((resolve) => {
      if (o.signal?.aborted) resolve(undefined);
      o.signal?.addEventListener('abort', () => resolve(undefined), { once: true });
    });
    const crashed = runner.promise.then(
      () => 'the queue runner ended',
      (err: Error) => `the queue runner failed: ${err.message}`,
    );
    const why = await Promise.race([stopped, lostLease, crashed]);
    if (why) o.emit({ type: 'problem', message: `Worker ${id} starts over: ${why}.` });
  } catch (err) {
    o.emit({ type: 'problem', message: `Cannot start the queue runner: ${(err as Error).message}` });
    await new Promise((resolve) => setTimeout(resolve, 1000));
  } finally {
    tasks.abort();
    o.signal?.removeEventListener('abort', stop);
    await runner?.stop().catch(() => undefined);
    await lease.release().catch(() => undefined);
  }
}

/**
 * Queries a task makes, tried again for a while when the connection fails: a database restart
 * would otherwise fail the task, and graphile-worker retries failures only after a growing pause.
 */
function patient(queue: WorkQueue, signal: AbortSignal) {
  return async (text: string, values: unknown[]) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await queue.pool.query(text, values);
      } catch (err) {
        if (attempt >= PATIENT_ATTEMPTS || signal.aborted || !isConnectionError(err)) throw err;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  };
}

/**
 * This process's row in `hearth_workers`, renewed with a sweep: the rows of workers whose lease
 * lapsed go, and so do the graphile-worker claims no live worker's row lists.
 */
function workerLease(queue: WorkQueue, id: string, host: string, o: LeaseOptions): Lease {
  const renew = async () => {
    const renewed = await queue.pool.query(
      `update hearth_workers set lease_until = now() + make_interval(secs => $2) where id = $1`,
      [id, o.leaseSeconds],
    );
    if (renewed.rowCount === 0) return false;
    await sweep(queue, o).catch((err: Error) =>
      o.emit({ type: 'problem', message: `The queue database did not answer: ${err.message}` }),
    );
    return true;
  };
  return new Lease(
    {
      acquire: async () => {
        await queue.pool.query(
          `insert into hearth_workers (id, host, tags, lease_until) values ($1, $2, $3, now() + make_interval(secs => $4))`,
          [id, host, o.tags, o.leaseSeconds],
        );
        return 'acquired';
      },
      renew,
      release: async () => {
        await queue.pool.query(`delete from hearth_workers where id = $1`, [id]);
      },
    },
    {
      ttlMs: o.leaseSeconds * 1000,
      name: `The lease of worker ${id}`,
      onTrouble: (err) =>
        o.emit({ type: 'problem', message: `The queue database did not answer: ${err.message}` }),
    },
  );
}

/** Releases the claims of workers whose lease lapsed. */
async function sweep(queue: WorkQueue, o: LeaseOptions): Promise<void> {
  await queue.pool.query(`delete from hearth_workers where lease_until < now()`);
  const orphans = await queue.pool.query<{ locked_by: string }>(
    `select distinct locked_by from graphile_worker.jobs j
     where locked_by is not null and locked_at < now() - make_interval(secs => $1)
       and not exists (select 1 from hearth_workers w where j.locked_by = any (w.graphile_ids))`,
    [REGISTER_GRACE_SECONDS],
  );
  const ids = orphans.rows.map((r) => r.locked_by);
  if (ids.length > 0) {
    await queue.forceUnlock(ids);
    o.emit({ type: 'released', workers: ids });
  }
}
