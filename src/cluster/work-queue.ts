/**
 * The shared work queue of several machines, in PostgreSQL. Claiming, retrying and waking workers
 * is graphile-worker's (a maintained queue; 0.16 is its last release for Node 20). What it does not
 * keep is ours, in tables beside its schema (src/store/postgres/migrations.ts): each worker
 * process's lease (graphile-worker releases a crashed worker's jobs only after four hours, so a
 * lease that lapses releases them at once, worker.ts), every claim, and one result per task (a
 * task re-run after its worker died completes once).
 */
import { randomUUID } from 'node:crypto';
import { Logger, makeWorkerUtils, type WorkerUtils } from 'graphile-worker';
import type pg from 'pg';
import { inTransaction, openPostgres, redact } from '../store/postgres/connection.js';

/** The task names workers register: one per set of tags, so graphile-worker matches tags itself. */
export const TASK_PREFIX = 'hearth_agent';

export interface QueuedTask {
  task: string;
  /** Where it runs, as a path on the worker's machine. */
  workspace: string;
  model?: string;
  /** Only a worker with all of these tags takes it. */
  tags: string[];
}

export interface TaskResult {
  key: string;
  status: 'ok' | 'failed';
  reason?: string;
  sessionId?: string;
  worker: string;
  host: string;
  promptTokens: number;
  completionTokens: number;
  finishedAt: string;
}

export interface QueueView {
  pending: Array<{ key: string; task: string; tags: string[]; attempts: number; lockedBy?: string }>;
  done: TaskResult[];
}

/** Silent: workers report through Hearth's own output, never graphile-worker's console logger. */
export const quietLogger = new Logger(() => () => undefined);

/** The task name for a set of tags (sorted, so the same set always names the same task). */
export function taskName(tags: readonly string[]): string {
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
    readonly pool: pg.Pool,
    private readonly utils: WorkerUtils,
  ) {}

  /** Connects, and creates graphile-worker's schema and Hearth's tables when missing. */
  static async open(url: string): Promise<WorkQueue> {
    const pool = await openPostgres(url);
    try {
      const utils = await makeWorkerUtils({ pgPool: pool, logger: quietLogger });
      await utils.migrate();
      return new WorkQueue(pool, utils);
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw new Error(`Cannot use the PostgreSQL database at ${redact(url)}: ${(err as Error).message}`);
    }
  }

  /** Queues a task: Hearth's record of it and graphile-worker's job in one transaction (its SQL `add_job`). */
  async add(task: QueuedTask): Promise<string> {
    const key = randomUUID();
    await inTransaction(this.pool, async (client) => {
      await client.query(
        'insert into hearth_tasks (key, task, workspace, model, tags) values ($1, $2, $3, $4, $5)',
        [key, task.task, task.workspace, task.model ?? null, task.tags],
      );
      // A task that keeps failing is not retried for ever; one whose worker died is not a failure.
      await client.query('select graphile_worker.add_job($1, $2::json, job_key => $3, max_attempts => 25)', [
        taskName(task.tags),
        JSON.stringify({ ...task, key }),
        key,
      ]);
    });
    return key;
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
    };
  }

  /** Releases the jobs of graphile-worker workers whose process is gone. */
  forceUnlock(graphileIds: string[]): Promise<void> {
    return graphileIds.length > 0 ? this.utils.forceUnlockWorkers(graphileIds) : Promise.resolve();
  }

  async close(): Promise<void> {
    await this.utils.release();
    await this.pool.end();
  }
}

export function toResult(row: Record<string, unknown>): TaskResult {
  return {
    key: String(row.key),
    status: row.status === 'ok' ? 'ok' : 'failed',
    ...(row.reason ? { reason: String(row.reason) } : {}),
    ...(row.session_id ? { sessionId: String(row.session_id) } : {}),
    worker: String(row.worker),
    host: String(row.host),
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    finishedAt: new Date(row.finished_at as string).toISOString(),
  };
}
