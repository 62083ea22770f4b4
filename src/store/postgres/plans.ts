/**
 * The plan store in the PostgreSQL database several machines share (`storage: postgres://...`).
 * A claim is one conditional UPDATE over a row picked `FOR UPDATE SKIP LOCKED`, so two workers
 * never take the same task, and it leases the task until `leaseMs` from now on the server's clock;
 * the worker renews the lease while its phase runs (`lease-keeper.ts`). A task whose lease lapsed
 * (its worker died, or lost the database longer than the lease) goes back to its phase at the
 * next `recover`. One worker works a workspace at a time (`hold`), because the workspace's tasks
 * share one worktree and one git index (see `task-paths.ts`).
 */
import type pg from 'pg';
import type { Claim, LogEntry, PlanStore, TaskUpdate } from '../../pipeline/plan-store.js';
import type { PlannedTask, PlanRow, TaskRow } from '../../pipeline/types.js';
import {
  claimOrder,
  HELD,
  planHash,
  planTitle,
  prerequisiteFailed,
  type RawTask,
  toTask,
  updateColumns,
} from '../pipeline/plan-rows.js';
import { FINISHED, RECOVER_TO, type TaskState } from '../pipeline/task-states.js';
import { inTransaction } from './connection.js';
import * as sql from './plan-sql.js';

export class PostgresPlanStore implements PlanStore {
  constructor(
    private readonly pool: pg.Pool,
    readonly leaseMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async addPlan(workspace: string, markdown: string): Promise<{ plan: PlanRow; created: boolean }> {
    const hash = planHash(markdown);
    const inserted = await this.pool.query<PlanRow>(
      `insert into hearth_plans (hash, workspace, title, markdown, created_at) values ($1, $2, $3, $4, $5)
       on conflict (workspace, hash) do nothing returning *`,
      [hash, workspace, planTitle(markdown), markdown, this.now()],
    );
    if (inserted.rows[0]) return { plan: sql.toPlan(inserted.rows[0]), created: true };
    const existing = await this.pool.query<PlanRow>(
      'select * from hearth_plans where workspace = $1 and hash = $2',
      [workspace, hash],
    );
    return { plan: sql.toPlan(existing.rows[0]!), created: false };
  }

  async plan(id: number): Promise<PlanRow> {
    const { rows } = await this.pool.query<PlanRow>('select * from hearth_plans where id = $1', [id]);
    if (!rows[0]) throw new Error(`No plan #${id}.`);
    return sql.toPlan(rows[0]);
  }

  async plans(workspace?: string): Promise<PlanRow[]> {
    const { rows } = workspace
      ? await this.pool.query<PlanRow>('select * from hearth_plans where workspace = $1 order by id', [
          workspace,
        ])
      : await this.pool.query<PlanRow>('select * from hearth_plans order by id');
    return rows.map(sql.toPlan);
  }

  async unplanned(workspace: string): Promise<PlanRow[]> {
    const { rows } = await this.pool.query<PlanRow>(
      "select * from hearth_plans where workspace = $1 and state = 'new' order by id",
      [workspace],
    );
    return rows.map(sql.toPlan);
  }

  async openWorkspaces(): Promise<string[]> {
    const { rows } = await this.pool.query<{ workspace: string }>(sql.OPEN_WORKSPACES, [
      [...FINISHED, 'failed'],
    ]);
    return rows.map((r) => r.workspace);
  }

  async setTasks(planId: number, tasks: PlannedTask[]): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const marked = await client.query(
        "update hearth_plans set state = 'planned', error = null where id = $1 and state = 'new'",
        [planId],
      );
      if (marked.rowCount === 0) return false;
      const ids: number[] = [];
      for (const [i, t] of tasks.entries()) {
        const { rows } = await client.query<{ id: number }>(
          `insert into hearth_pipeline_tasks (plan_id, seq, title, description, files, acceptance, updated_at)
           values ($1, $2, $3, $4, $5, $6, $7) returning id`,
          [
            planId,
            i + 1,
            t.title,
            t.description,
            JSON.stringify(t.files),
            JSON.stringify(t.acceptance),
            this.now(),
          ],
        );
        ids.push(rows[0]!.id);
      }
      for (const [i, t] of tasks.entries()) {
        for (const n of t.depends_on) {
          await client.query(
            'insert into hearth_pipeline_task_deps (task_id, depends_on) values ($1, $2) on conflict do nothing',
            [ids[i], ids[n - 1]],
          );
        }
      }
      return true;
    });
  }

  async failPlan(planId: number, error: string): Promise<void> {
    await this.pool.query("update hearth_plans set state = 'failed', error = $2 where id = $1", [
      planId,
      error,
    ]);
  }

  async tasks(planId?: number): Promise<TaskRow[]> {
    const { rows } =
      planId === undefined
        ? await this.pool.query<RawTask>(`${sql.TASK_SELECT} order by plan_id, seq`)
        : await this.pool.query<RawTask>(`${sql.TASK_SELECT} where plan_id = $1 order by seq`, [planId]);
    return rows.map(toTask);
  }

  task(id: number): Promise<TaskRow> {
    return sql.taskOn(this.pool, id);
  }

  async claim(owner: string, workspace: string, order?: TaskState[]): Promise<TaskRow | undefined> {
    for (const [from, to] of claimOrder(order)) {
      const id = await inTransaction(this.pool, async (client) => {
        const { rows } = await client.query<{ id: number }>(sql.CLAIM_NEXT, [
          to,
          owner,
          this.now(),
          from,
          workspace,
          FINISHED,
          this.leaseMs,
        ]);
        const row = rows[0] as { id: number; plan_id: number } | undefined;
        if (row)
          await sql.logOn(client, { id: row.id, planId: row.plan_id }, 'state', { state: to }, this.now());
        return row?.id;
      });
      if (id !== undefined) return this.task(id);
    }
    return undefined;
  }

  async renew(owner: string, workspace: string, taskId?: number): Promise<boolean> {
    const held = await this.pool.query(
      `update hearth_pipeline_control set hold_until = ${sql.lease('$3')} where workspace = $1 and holder = $2`,
      [workspace, owner, this.leaseMs],
    );
    if (held.rowCount === 0) return false;
    if (taskId !== undefined) {
      await this.pool.query(
        `update hearth_pipeline_tasks set lease_until = ${sql.lease('$3')}
         where id = $1 and owner = $2 and state = any ($4::text[])`,
        [taskId, owner, this.leaseMs, HELD],
      );
    }
    return true;
  }

  async hold(workspace: string, owner: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(sql.HOLD, [workspace, owner, this.leaseMs, this.now()]);
    return rowCount === 1;
  }

  /**
   * Replaces a holder `alive` says is dead, whatever its hold's time: conditional on it still
   * being the holder, so two workers of the machine restarted at once do not both take over.
   */
  async takeOver(
    workspace: string,
    owner: string,
    alive: (owner: string) => boolean,
  ): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ holder: string | null }>(
      'select holder from hearth_pipeline_control where workspace = $1',
      [workspace],
    );
    const holder = rows[0]?.holder;
    if (!holder || holder === owner || alive(holder)) return undefined;
    const { rowCount } = await this.pool.query(
      `update hearth_pipeline_control set holder = $2, hold_until = ${sql.lease('$4')}
       where workspace = $1 and holder = $3`,
      [workspace, owner, holder, this.leaseMs],
    );
    return rowCount === 1 ? holder : undefined;
  }

  async release(workspace: string, owner: string): Promise<void> {
    await this.pool.query(
      'update hearth_pipeline_control set holder = null, hold_until = null where workspace = $1 and holder = $2',
      [workspace, owner],
    );
  }

  transition(
    claim: Claim,
    state: TaskState,
    update: TaskUpdate = {},
    note?: string,
  ): Promise<TaskRow | undefined> {
    return inTransaction(this.pool, (client) =>
      this.transitionOn(client, claim.id, state, update, note, claim),
    );
  }

  async fail(claim: Claim, error: string): Promise<TaskRow[] | undefined> {
    return inTransaction(this.pool, async (client) => {
      const first = await this.transitionOn(client, claim.id, 'failed', { error }, error, claim);
      if (!first) return undefined;
      const failed = [first];
      const seen = new Set([claim.id]);
      for (let i = 0; i < failed.length; i++) {
        const cause = failed[i]!;
        const { rows } = await client.query<{ task_id: number }>(
          'select task_id from hearth_pipeline_task_deps where depends_on = $1 order by task_id',
          [cause.id],
        );
        for (const { task_id } of rows) {
          if (seen.has(task_id)) continue;
          seen.add(task_id);
          const why = prerequisiteFailed(cause, error);
          failed.push((await this.transitionOn(client, task_id, 'failed', { error: why }, why))!);
        }
      }
      return failed;
    });
  }

  async record(claim: Claim, kind: string, body: unknown): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `insert into hearth_pipeline_log (plan_id, task_id, kind, body, created_at)
       select $1, $2, $3, $4, $5 where exists (
         select 1 from hearth_pipeline_tasks where id = $2 and ${sql.claimed('$6', '$7', '$8')})`,
      [claim.planId, claim.id, kind, JSON.stringify(body), this.now(), claim.owner, claim.epoch, HELD],
    );
    return rowCount === 1;
  }

  /** One transaction: both leases renewed, or neither when one is gone. */
  async confirm(claim: Claim, workspace: string): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const held = await client.query(
        `update hearth_pipeline_control set hold_until = ${sql.lease('$3')} where workspace = $1 and holder = $2`,
        [workspace, claim.owner, this.leaseMs],
      );
      if (held.rowCount !== 1) return false;
      const task = await client.query(
        `update hearth_pipeline_tasks set lease_until = ${sql.lease('$2')}
         where id = $1 and ${sql.claimed('$3', '$4', '$5')}`,
        [claim.id, this.leaseMs, claim.owner, claim.epoch, HELD],
      );
      return task.rowCount === 1;
    });
  }

  /**
   * Tasks whose lease lapsed, that have no owner, or whose owner `alive` says is dead (a worker
   * of this machine whose process is gone: no need to wait for its lease).
   */
  async recover(workspace: string, alive: (owner: string) => boolean): Promise<TaskRow[]> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{
        id: number;
        state: TaskState;
        owner: string | null;
        lapsed: boolean;
      }>(sql.RECOVERABLE, [workspace, HELD]);
      const recovered: TaskRow[] = [];
      for (const t of rows) {
        if (t.owner && !t.lapsed && alive(t.owner)) continue;
        recovered.push(
          (await this.transitionOn(client, t.id, RECOVER_TO[t.state]!, {}, `recovered from ${t.state}`))!,
        );
      }
      return recovered;
    });
  }

  async heldIn(workspace: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      `select count(*) as n from hearth_pipeline_tasks t join hearth_plans p on p.id = t.plan_id
       where p.workspace = $1 and t.state = any ($2::text[])`,
      [workspace, HELD],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async retryFailed(workspace: string): Promise<number> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ id: number }>(
        `select t.id from hearth_pipeline_tasks t join hearth_plans p on p.id = t.plan_id
         where p.workspace = $1 and t.state = 'failed' order by t.id for update of t`,
        [workspace],
      );
      for (const { id } of rows) {
        await this.transitionOn(
          client,
          id,
          'pending',
          { error: null, rework: 0, feedback: null, signatures: {}, outcome: null },
          'retry',
        );
      }
      return rows.length;
    });
  }

  log(task: { id: number | null; planId: number }, kind: string, body: unknown): Promise<void> {
    return sql.logOn(this.pool, task, kind, body, this.now());
  }

  async logOf(planId: number, kind?: string): Promise<LogEntry[]> {
    const { rows } = await this.pool.query<{
      task_id: number | null;
      kind: string;
      body: string;
      created_at: string;
    }>(
      `select task_id, kind, body, created_at from hearth_pipeline_log where plan_id = $1 ${kind ? 'and kind = $2' : ''} order by id`,
      kind ? [planId, kind] : [planId],
    );
    return rows.map((r) => ({
      taskId: r.task_id,
      kind: r.kind,
      body: JSON.parse(r.body),
      at: Number(r.created_at),
    }));
  }

  /** Moves the task; with `claim`, only while the claim stands (undefined when it does not). */
  private async transitionOn(
    q: sql.Query,
    id: number,
    state: TaskState,
    update: TaskUpdate,
    note?: string,
    claim?: Claim,
  ): Promise<TaskRow | undefined> {
    const cols: Array<[string, unknown]> = [
      ['state', state],
      ['updated_at', this.now()],
      ...updateColumns(update),
    ];
    if (!HELD.includes(state)) cols.push(['owner', null], ['lease_until', null]);
    const n = cols.length + 2;
    const moved = await q.query(
      `update hearth_pipeline_tasks set ${cols.map(([c], i) => `${c} = $${i + 2}`).join(', ')} where id = $1${
        claim ? ` and ${sql.claimed(`$${n}`, `$${n + 1}`, `$${n + 2}`)}` : ''
      }`,
      [id, ...cols.map(([, v]) => v), ...(claim ? [claim.owner, claim.epoch, HELD] : [])],
    );
    if (claim && moved.rowCount === 0) return undefined;
    const task = await sql.taskOn(q, id);
    await sql.logOn(q, task, 'state', { state, ...(note ? { note } : {}) }, this.now());
    return task;
  }
}
