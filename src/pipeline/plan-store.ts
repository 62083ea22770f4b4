import { createHash } from 'node:crypto';
import type { Db } from '../store/database.js';
import {
  FINISHED,
  type Finding,
  type PlannedTask,
  type PlanRow,
  RECOVER_TO,
  type TaskRow,
  type TaskState,
} from './types.js';

interface RawTask {
  id: number;
  plan_id: number;
  seq: number;
  title: string;
  description: string;
  files: string;
  acceptance: string;
  state: TaskState;
  outcome: TaskRow['outcome'];
  session_id: string | null;
  rework: number;
  feedback: string | null;
  findings: string | null;
  signatures: string;
  summary: string | null;
  error: string | null;
  commit_hash: string | null;
  deps: string | null;
}

const TASK_SELECT = `SELECT t.*, (SELECT group_concat(depends_on) FROM pipeline_task_deps d WHERE d.task_id = t.id) AS deps
  FROM pipeline_tasks t`;

/** States a claim moves a task into, by the state it is claimed from, in order of preference. */
const CLAIMS: Array<[from: TaskState, to: TaskState]> = [
  ['approved', 'committing'],
  ['coded', 'verifying'],
  ['pending', 'coding'],
];

export interface LogEntry {
  taskId: number | null;
  kind: string;
  body: unknown;
  /** Epoch milliseconds. */
  at: number;
}

export type TaskUpdate = Partial<
  Pick<
    TaskRow,
    | 'outcome'
    | 'sessionId'
    | 'rework'
    | 'feedback'
    | 'findings'
    | 'signatures'
    | 'summary'
    | 'error'
    | 'commitHash'
  >
>;

/**
 * Plans and their tasks in SQLite: the pipeline's durable queue. Every change is one statement or
 * one transaction, so a process killed at any point leaves a state `recover` can resume from.
 */
export class PlanStore {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  /** Stores a plan once per workspace: identical content returns the stored plan (`created: false`). */
  addPlan(workspace: string, markdown: string): { plan: PlanRow; created: boolean } {
    const hash = createHash('sha256').update(markdown.replace(/\r\n/g, '\n').trim()).digest('hex');
    const existing = this.db
      .prepare('SELECT * FROM plans WHERE workspace = ? AND hash = ?')
      .get(workspace, hash) as PlanRow | undefined;
    if (existing) return { plan: existing, created: false };
    const title =
      /^#+\s*(.+)$/m.exec(markdown)?.[1]?.trim() ?? markdown.trim().split('\n')[0]?.slice(0, 80) ?? '';
    const info = this.db
      .prepare('INSERT INTO plans (hash, workspace, title, markdown, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(hash, workspace, title, markdown, this.now());
    return { plan: this.plan(Number(info.lastInsertRowid)), created: true };
  }

  plan(id: number): PlanRow {
    const row = this.db.prepare('SELECT * FROM plans WHERE id = ?').get(id) as PlanRow | undefined;
    if (!row) throw new Error(`No plan #${id}.`);
    return row;
  }

  plans(workspace?: string): PlanRow[] {
    return (
      workspace
        ? this.db.prepare('SELECT * FROM plans WHERE workspace = ? ORDER BY id').all(workspace)
        : this.db.prepare('SELECT * FROM plans ORDER BY id').all()
    ) as PlanRow[];
  }

  /** Plans not yet decomposed into tasks. */
  unplanned(workspace: string): PlanRow[] {
    return this.db
      .prepare("SELECT * FROM plans WHERE workspace = ? AND state = 'new' ORDER BY id")
      .all(workspace) as PlanRow[];
  }

  /** Stores the planner's tasks and marks the plan planned, in one transaction. */
  setTasks(planId: number, tasks: PlannedTask[]): void {
    this.db.transaction(() => {
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
      this.db.prepare("UPDATE plans SET state = 'planned', error = NULL WHERE id = ?").run(planId);
    })();
  }

  failPlan(planId: number, error: string): void {
    this.db.prepare("UPDATE plans SET state = 'failed', error = ? WHERE id = ?").run(error, planId);
  }

  tasks(planId?: number): TaskRow[] {
    const rows = (
      planId === undefined
        ? this.db.prepare(`${TASK_SELECT} ORDER BY plan_id, seq`).all()
        : this.db.prepare(`${TASK_SELECT} WHERE plan_id = ? ORDER BY seq`).all(planId)
    ) as RawTask[];
    return rows.map(toTask);
  }

  task(id: number): TaskRow {
    const row = this.db.prepare(`${TASK_SELECT} WHERE id = ?`).get(id) as RawTask | undefined;
    if (!row) throw new Error(`No task #${id}.`);
    return toTask(row);
  }

  /**
   * Atomically takes the next task a worker can move on, for `owner`: one further along first
   * (approved, then coded), else a pending one whose prerequisites are all finished. One UPDATE
   * per attempt, so two workers never take the same task. `order` (states to claim from) changes
   * the preference, as phase batching does.
   */
  claim(owner: string, workspace: string, order?: TaskState[]): TaskRow | undefined {
    const finished = FINISHED.map((s) => `'${s}'`).join(', ');
    const claims = order ? CLAIMS.filter(([from]) => order.includes(from)) : CLAIMS;
    if (order) claims.sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]));
    for (const [from, to] of claims) {
      const row = this.db
        .prepare(
          `UPDATE pipeline_tasks SET state = ?, owner = ?, updated_at = ? WHERE id = (
             SELECT t.id FROM pipeline_tasks t JOIN plans p ON p.id = t.plan_id
             WHERE t.state = ? AND p.workspace = ? AND NOT EXISTS (
               SELECT 1 FROM pipeline_task_deps d JOIN pipeline_tasks pre ON pre.id = d.depends_on
               WHERE d.task_id = t.id AND pre.state NOT IN (${finished}))
             ORDER BY t.plan_id, t.seq LIMIT 1)
           RETURNING id`,
        )
        .get(to, owner, this.now(), from, workspace) as { id: number } | undefined;
      if (row) {
        this.log(this.task(row.id), 'state', { state: to });
        return this.task(row.id);
      }
    }
    return undefined;
  }

  /** Moves a task to `state`, with whatever else changed; logged. */
  transition(id: number, state: TaskState, update: TaskUpdate = {}, note?: string): TaskRow {
    const cols: string[] = ['state = ?', 'updated_at = ?'];
    const values: unknown[] = [state, this.now()];
    const set = (col: string, value: unknown) => {
      cols.push(`${col} = ?`);
      values.push(value);
    };
    if ('outcome' in update) set('outcome', update.outcome);
    if ('sessionId' in update) set('session_id', update.sessionId);
    if ('rework' in update) set('rework', update.rework);
    if ('feedback' in update) set('feedback', update.feedback);
    if ('findings' in update) set('findings', JSON.stringify(update.findings));
    if ('signatures' in update) set('signatures', JSON.stringify(update.signatures));
    if ('summary' in update) set('summary', update.summary);
    if ('error' in update) set('error', update.error);
    if ('commitHash' in update) set('commit_hash', update.commitHash);
    if (!(['coding', 'verifying', 'reviewing', 'committing'] as TaskState[]).includes(state))
      set('owner', null);
    this.db.prepare(`UPDATE pipeline_tasks SET ${cols.join(', ')} WHERE id = ?`).run(...values, id);
    const task = this.task(id);
    this.log(task, 'state', { state, ...(note ? { note } : {}) });
    return task;
  }

  /** Fails a task and, with the reason, every task that waits on it (directly or not). */
  fail(id: number, error: string): TaskRow[] {
    return this.db.transaction(() => {
      const failed = [this.transition(id, 'failed', { error }, error)];
      const seen = new Set([id]);
      for (let i = 0; i < failed.length; i++) {
        const cause = failed[i]!;
        const dependents = this.db
          .prepare('SELECT task_id FROM pipeline_task_deps WHERE depends_on = ?')
          .all(cause.id) as Array<{ task_id: number }>;
        for (const { task_id } of dependents) {
          if (seen.has(task_id)) continue;
          seen.add(task_id);
          const why = `prerequisite task #${cause.seq} (${cause.title}) failed: ${cause.error ?? error}`;
          failed.push(this.transition(task_id, 'failed', { error: why }, why));
        }
      }
      return failed;
    })();
  }

  /**
   * Puts tasks a dead worker held back in the state they were entered from. `alive` says whether an
   * owner still runs (another worker's tasks are left alone).
   */
  recover(workspace: string, alive: (owner: string) => boolean): TaskRow[] {
    const held = this.db
      .prepare(
        `SELECT t.id, t.state, t.owner FROM pipeline_tasks t JOIN plans p ON p.id = t.plan_id
         WHERE p.workspace = ? AND t.state IN ('coding', 'verifying', 'reviewing', 'committing')`,
      )
      .all(workspace) as Array<{ id: number; state: TaskState; owner: string | null }>;
    return held
      .filter((t) => !t.owner || !alive(t.owner))
      .map((t) => this.transition(t.id, RECOVER_TO[t.state]!, {}, `recovered from ${t.state}`));
  }

  /** Tasks of the workspace a worker holds now. */
  heldIn(workspace: string): number {
    const row = this.db
      .prepare(
        `SELECT count(*) AS n FROM pipeline_tasks t JOIN plans p ON p.id = t.plan_id
         WHERE p.workspace = ? AND t.state IN ('coding', 'verifying', 'reviewing', 'committing')`,
      )
      .get(workspace) as { n: number };
    return row.n;
  }

  /** Failed tasks (a failed task's dependents are failed too) back to pending, fresh. */
  retryFailed(workspace: string): number {
    const failed = this.db
      .prepare(
        `SELECT t.id FROM pipeline_tasks t JOIN plans p ON p.id = t.plan_id
         WHERE p.workspace = ? AND t.state = 'failed'`,
      )
      .all(workspace) as Array<{ id: number }>;
    this.db.transaction(() => {
      for (const { id } of failed) {
        this.transition(
          id,
          'pending',
          { error: null, rework: 0, feedback: null, signatures: {}, outcome: null },
          'retry',
        );
      }
    })();
    return failed.length;
  }

  /** Appends to the plan's log; `task.id` null for what concerns the plan as a whole. */
  log(task: { id: number | null; planId: number }, kind: string, body: unknown): void {
    this.db
      .prepare('INSERT INTO pipeline_log (plan_id, task_id, kind, body, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(task.planId, task.id, kind, JSON.stringify(body), this.now());
  }

  logOf(planId: number, kind?: string): LogEntry[] {
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
}

function toTask(r: RawTask): TaskRow {
  return {
    id: r.id,
    planId: r.plan_id,
    seq: r.seq,
    title: r.title,
    description: r.description,
    files: JSON.parse(r.files) as string[],
    acceptance: JSON.parse(r.acceptance) as string[],
    dependsOn: r.deps ? r.deps.split(',').map(Number) : [],
    state: r.state,
    outcome: r.outcome,
    sessionId: r.session_id,
    rework: r.rework,
    feedback: r.feedback,
    findings: r.findings ? (JSON.parse(r.findings) as Finding[]) : [],
    signatures: JSON.parse(r.signatures) as Record<string, number>,
    summary: r.summary,
    error: r.error,
    commitHash: r.commit_hash,
  };
}
