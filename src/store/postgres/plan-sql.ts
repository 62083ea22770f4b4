/**
 * The SQL of the PostgreSQL plan store (./plans.ts) that is not one method's own: the task select
 * and the lease and claim conditions several statements share, the longer statements kept as
 * constants, and the row helpers every transaction of the store reuses.
 */
import type pg from 'pg';
import type { PlanRow, TaskRow } from '../../pipeline/types.js';
import { type RawTask, toTask } from '../pipeline/plan-rows.js';

/** The pool, or one client inside a transaction. */
export type Query = Pick<pg.Pool, 'query'> | pg.PoolClient;

export const TASK_SELECT = `select t.*, (select string_agg(d.depends_on::text, ',' order by d.depends_on)
    from hearth_pipeline_task_deps d where d.task_id = t.id) as deps
  from hearth_pipeline_tasks t`;

export const lease = (param: string) => `now() + make_interval(secs => ${param}::double precision / 1000)`;

/** The claim stands (parameters: owner, epoch, the held states): the task is held, as that claim. */
export const claimed = (owner: string, epoch: string, held: string) =>
  `owner = ${owner} and epoch = ${epoch} and state = any (${held}::text[])`;

/** The workspaces with a plan not yet planned, or a task not in one of the states $1. */
export const OPEN_WORKSPACES = `select distinct p.workspace from hearth_plans p where p.state = 'new' or exists (
         select 1 from hearth_pipeline_tasks t where t.plan_id = p.id and t.state <> all($1::text[]))
       order by p.workspace`;

/**
 * Takes the first ready task of a workspace in state $4 into $1 for owner $2 (at $3, leased for $7
 * ms); $5 is the workspace and $6 the finished states a prerequisite must be in.
 */
export const CLAIM_NEXT = `with picked as (
             select t.id from hearth_pipeline_tasks t join hearth_plans p on p.id = t.plan_id
             where t.state = $4 and p.workspace = $5 and not exists (
               select 1 from hearth_pipeline_task_deps d join hearth_pipeline_tasks pre on pre.id = d.depends_on
               where d.task_id = t.id and pre.state <> all ($6::text[]))
             order by t.plan_id, t.seq limit 1
             for update of t skip locked)
           update hearth_pipeline_tasks u set state = $1, owner = $2, epoch = u.epoch + 1, updated_at = $3,
             lease_until = ${lease('$7')}
           from picked where u.id = picked.id and u.state = $4
           returning u.id, u.plan_id`;

/** Workspace $1 held by $2 for $3 ms (at $4), unless another holder's hold has not lapsed. */
export const HOLD = `insert into hearth_pipeline_control (workspace, holder, hold_until, updated_at)
       values ($1, $2, ${lease('$3')}, $4)
       on conflict (workspace) do update set holder = excluded.holder, hold_until = excluded.hold_until
       where hearth_pipeline_control.holder is null or hearth_pipeline_control.holder = excluded.holder
          or hearth_pipeline_control.hold_until < now()`;

/** Workspace $1's tasks in the held states $2, locked, with whether each one's lease lapsed. */
export const RECOVERABLE = `select t.id, t.state, t.owner, (t.lease_until is null or t.lease_until < now()) as lapsed
         from hearth_pipeline_tasks t join hearth_plans p on p.id = t.plan_id
         where p.workspace = $1 and t.state = any ($2::text[])
         order by t.id for update of t skip locked`;

export async function taskOn(q: Query, id: number): Promise<TaskRow> {
  const { rows } = await q.query<RawTask>(`${TASK_SELECT} where id = $1`, [id]);
  if (!rows[0]) throw new Error(`No task #${id}.`);
  return toTask(rows[0]);
}

/** `at` is the store's clock (`now`), as every other time it writes. */
export async function logOn(
  q: Query,
  task: { id: number | null; planId: number },
  kind: string,
  body: unknown,
  at: number,
) {
  await q.query(
    'insert into hearth_pipeline_log (plan_id, task_id, kind, body, created_at) values ($1, $2, $3, $4, $5)',
    [task.planId, task.id, kind, JSON.stringify(body), at],
  );
}

/** A plan row as SQLite gives it: PostgreSQL returns bigint columns as text. */
export function toPlan(row: PlanRow & { created_at?: unknown }): PlanRow {
  return { ...row, created_at: Number(row.created_at) } as PlanRow;
}
