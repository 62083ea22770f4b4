/**
 * The plan store in the session database (SQLite): one machine. The work is synchronous
 * (better-sqlite3); the methods are async only to share `PlanStore` with PostgreSQL. A dead
 * worker's tasks are found by its process id (`recover`), so there are no leases, and the
 * workspace is always held: processes of one machine share it as they share the file.
 */

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
import type { Db } from './database.js';

const TASK_SELECT = `SELECT t.*, (SELECT group_concat(depends_on) FROM pipeline_task_deps d WHERE d.task_id = t.id) AS deps
  FROM pipeline_tasks t`;

const IN_HELD = HELD.map((s) => `'${s}'`).join(', ');

/** The claim stands: the task is held, by the claim's owner, as that claim. */
const CLAIMED = `owner = ? AND epoch = ? AND state IN (${IN_HELD})`;

export class SqlitePlanStore implements PlanStore {
  readonly leaseMs = undefined;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  async addPlan(workspace: string, markdown: string): Promise<{ plan: PlanRow; created: boolean }> {
    const hash = planHash(markdown);
    const existing = this.db
      .prepare('SELECT * FROM plans WHERE workspace = ? AND hash = ?')
      .get(workspace, hash) as PlanRow | undefined;
    if (existing) return { plan: existing, created: false };
    const info = this.db
      .prepare('INSERT INTO plans (hash, workspace, title, markdown, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(hash, workspace, planTitle(markdown), markdown, this.now());
    return { plan: this.planNow(Number(info.lastInsertRowid)), created: true };
  }

  async plan(id: number): Promise<PlanRow> {
    return this.planNow(id);
  }

  async plans(workspace?: string): Promise<PlanRow[]> {
    return (
      workspace
        ? this.db.prepare('SELECT * FROM plans WHERE workspace = ? ORDER BY id').all(workspace)
        : this.db.prepare('SELECT * FROM plans ORDER BY id').all()
    ) as PlanRow[];
  }

  async unplanned(workspace: string): Promise<PlanRow[]> {
    return this.db
      .prepare("SELECT * FROM plans WHERE workspace = ? AND state = 'new' ORDER BY id")
      .all(workspace) as PlanRow[];
  }

  async openWorkspaces(): Promise<string[]> {
    const closed = [...FINISHED, 'failed'].map((s) => `'${s}'`).join(', ');
    const rows = this.db
      .prepare(
        `SELECT DISTINCT p.workspace FROM plans p WHERE p.state = 'new' OR EXISTS (
           SELECT 1 FROM pipeline_tasks t WHERE t.plan_id = p.id AND t.state NOT IN (${closed}))
         ORDER BY p.workspace`,
      )
      .all() as Array<{ workspace: string }>;
    return rows.map((r) => r.workspace);
  }

  async setTasks(planId: number, tasks: PlannedTask[]): Promise<boolean> {
    return this.db.transaction(() => {
      const marked = this.db
        .prepare("UPDATE plans SET state = 'planned', error = NULL WHERE id = ? AND state = 'new'")
        .run(planId);
      if (marked.changes === 0) return false;
      const insert = this.db.prepare(
        'INSERT INTO pipeline_tasks (plan_id, seq, title, description, files, acceptance, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      );
      const ids = tasks.map(
        (t, i) =>
          insert.run(
            planId,
            i + 1,
            t.title,
            t.description,
            JSON.stringify(t.files),
            JSON.stringify(t.acceptance),
            this.now(),
          ).lastInsertRowid,
      );
      const dep = this.db.prepare(
        'INSERT OR IGNORE INTO pipeline_task_deps (task_id, depends_on) VALUES (?, ?)',
      );
      tasks.forEach((t, i) => {
        for (const n of t.depends_on) dep.run(ids[i], ids[n - 1]);
      });
      return true;
    })();
  }

  async failPlan(planId: number, error: string): Promise<void> {
    this.db.prepare("UPDATE plans SET state = 'failed', error = ? WHERE id = ?").run(error, planId);
  }

  async tasks(planId?: number): Promise<TaskRow[]> {
    const rows = (
      planId === undefined
        ? this.db.prepare(`${TASK_SELECT} ORDER BY plan_id, seq`).all()
        : this.db.prepare(`${TASK_SELECT} WHERE plan_id = ? ORDER BY seq`).all(planId)
    ) as RawTask[];
    return rows.map(toTask);
  }

  async task(id: number): Promise<TaskRow> {
    return this.taskNow(id);
  }

  /** One UPDATE per attempt, so two processes never take the same task. */
  async claim(owner: string, workspace: string, order?: TaskState[]): Promise<TaskRow | undefined> {
    const finished = FINISHED.map((s) => `'${s}'`).join(', ');
    for (const [from, to] of claimOrder(order)) {
      const row = this.db
        .prepare(
          `UPDATE pipeline_tasks SET state = ?, owner = ?, epoch = epoch + 1, updated_at = ? WHERE id = (
             SELECT t.id FROM pipeline_tasks t JOIN plans p ON p.id = t.plan_id
             WHERE t.state = ? AND p.workspace = ? AND NOT EXISTS (
               SELECT 1 FROM pipeline_task_deps d JOIN pipeline_tasks pre ON pre.id = d.depends_on
               WHERE d.task_id = t.id AND pre.state NOT IN (${finished}))
             ORDER BY t.plan_id, t.seq LIMIT 1)
           RETURNING id`,
        )
        .get(to, owner, this.now(), from, workspace) as { id: number } | undefined;
      if (row) {
        const task = this.taskNow(row.id);
        this.logNow(task, 'state', { state: to });
        return task;
      }
    }
    return undefined;
  }

  async renew(): Promise<boolean> {
    return true;
  }

  async hold(): Promise<boolean> {
    return true;
  }

  async takeOver(): Promise<string | undefined> {
    return undefined;
  }

  async release(): Promise<void> {}

  async transition(
    claim: Claim,
    state: TaskState,
    update: TaskUpdate = {},
    note?: string,
  ): Promise<TaskRow | undefined> {
    return this.transitionNow(claim.id, state, update, note, claim);
  }

  async fail(claim: Claim, error: string): Promise<TaskRow[] | undefined> {
    return this.db.transaction(() => {
      const first = this.transitionNow(claim.id, 'failed', { error }, error, claim);
      if (!first) return undefined;
      const failed = [first];
      const seen = new Set([claim.id]);
      for (let i = 0; i < failed.length; i++) {
        const cause = failed[i]!;
        const dependents = this.db
          .prepare('SELECT task_id FROM pipeline_task_deps WHERE depends_on = ?')
          .all(cause.id) as Array<{ task_id: number }>;
        for (const { task_id } of dependents) {
          if (seen.has(task_id)) continue;
          seen.add(task_id);
          const why = prerequisiteFailed(cause, error);
          failed.push(this.transitionNow(task_id, 'failed', { error: why }, why)!);
        }
      }
      return failed;
    })();
  }

  async record(claim: Claim, kind: string, body: unknown): Promise<boolean> {
    const info = this.db
      .prepare(
        `INSERT INTO pipeline_log (plan_id, task_id, kind, body, created_at) SELECT ?, ?, ?, ?, ?
         WHERE EXISTS (SELECT 1 FROM pipeline_tasks WHERE id = ? AND ${CLAIMED})`,
      )
      .run(
        claim.planId,
        claim.id,
        kind,
        JSON.stringify(body),
        this.now(),
        claim.id,
        claim.owner,
        claim.epoch,
      );
    return info.changes === 1;
  }

  async confirm(claim: Claim): Promise<boolean> {
    return (
      this.db
        .prepare(`SELECT 1 FROM pipeline_tasks WHERE id = ? AND ${CLAIMED}`)
        .get(claim.id, claim.owner, claim.epoch) !== undefined
    );
  }

  async recover(workspace: string, alive: (owner: string) => boolean): Promise<TaskRow[]> {
    const held = this.db
      .prepare(
        `SELECT t.id, t.state, t.owner FROM pipeline_tasks t JOIN plans p ON p.id = t.plan_id
         WHERE p.workspace = ? AND t.state IN (${IN_HELD})`,
      )
      .all(workspace) as Array<{ id: number; state: TaskState; owner: string | null }>;
    return held
      .filter((t) => !t.owner || !alive(t.owner))
      .map((t) => this.transitionNow(t.id, RECOVER_TO[t.state]!, {}, `recovered from ${t.state}`)!);
  }

  async heldIn(workspace: string): Promise<number> {
    const row = this.db
      .prepare(
        `SELECT count(*) AS n FROM pipeline_tasks t JOIN plans p ON p.id = t.plan_id
         WHERE p.workspace = ? AND t.state IN (${IN_HELD})`,
      )
      .get(workspace) as { n: number };
    return row.n;
  }

  async retryFailed(workspace: string): Promise<number> {
    const failed = this.db
      .prepare(
        `SELECT t.id FROM pipeline_tasks t JOIN plans p ON p.id = t.plan_id
         WHERE p.workspace = ? AND t.state = 'failed'`,
      )
      .all(workspace) as Array<{ id: number }>;
    this.db.transaction(() => {
      for (const { id } of failed) {
        this.transitionNow(
          id,
          'pending',
          { error: null, rework: 0, feedback: null, signatures: {}, outcome: null },
          'retry',
        );
      }
    })();
    return failed.length;
  }

  async log(task: { id: number | null; planId: number }, kind: string, body: unknown): Promise<void> {
    this.logNow(task, kind, body);
  }

  async logOf(planId: number, kind?: string): Promise<LogEntry[]> {
    const rows = this.db
      .prepare(
        `SELECT task_id, kind, body, created_at FROM pipeline_log WHERE plan_id = ? ${kind ? 'AND kind = ?' : ''} ORDER BY id`,
      )
      .all(...(kind ? [planId, kind] : [planId])) as Array<{
      task_id: number | null;
      kind: string;
      body: string;
      created_at: number;
    }>;
    return rows.map((r) => ({ taskId: r.task_id, kind: r.kind, body: JSON.parse(r.body), at: r.created_at }));
  }

  private planNow(id: number): PlanRow {
    const row = this.db.prepare('SELECT * FROM plans WHERE id = ?').get(id) as PlanRow | undefined;
    if (!row) throw new Error(`No plan #${id}.`);
    return row;
  }

  private taskNow(id: number): TaskRow {
    const row = this.db.prepare(`${TASK_SELECT} WHERE id = ?`).get(id) as RawTask | undefined;
    if (!row) throw new Error(`No task #${id}.`);
    return toTask(row);
  }

  /** Moves the task; with `claim`, only while the claim stands (undefined when it does not). */
  private transitionNow(
    id: number,
    state: TaskState,
    update: TaskUpdate,
    note?: string,
    claim?: Claim,
  ): TaskRow | undefined {
    const cols: Array<[string, unknown]> = [
      ['state', state],
      ['updated_at', this.now()],
      ...updateColumns(update),
    ];
    if (!HELD.includes(state)) cols.push(['owner', null]);
    const moved = this.db
      .prepare(
        `UPDATE pipeline_tasks SET ${cols.map(([c]) => `${c} = ?`).join(', ')} WHERE id = ?${claim ? ` AND ${CLAIMED}` : ''}`,
      )
      .run(...cols.map(([, v]) => v), id, ...(claim ? [claim.owner, claim.epoch] : []));
    if (claim && moved.changes === 0) return undefined;
    const task = this.taskNow(id);
    this.logNow(task, 'state', { state, ...(note ? { note } : {}) });
    return task;
  }

  private logNow(task: { id: number | null; planId: number }, kind: string, body: unknown): void {
    this.db
      .prepare('INSERT INTO pipeline_log (plan_id, task_id, kind, body, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(task.planId, task.id, kind, JSON.stringify(body), this.now());
  }
}
