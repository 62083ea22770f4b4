/**
 * The pipeline's durable queue as every part of the pipeline sees it: plans, their tasks with
 * dependencies, the plan's log, and (for several machines) leases. Two backends: the session
 * database (`store/sqlite/plans.ts`, one machine) and the shared PostgreSQL database
 * (`store/postgres/plans.ts`, several machines), sharing their rows in `store/pipeline/`. Every
 * change is one statement or one transaction, so a process killed at any point leaves a state
 * `recover` resumes from.
 */
import type { PlannedTask, PlanRow, TaskRow, TaskState } from './types.js';

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
 * A task in a worker's hands: `claim` gave it to `owner` as its `epoch`th claim. Every move and
 * record of a claimed task is conditional on the claim still standing (the same owner and epoch,
 * the task still held), so a worker that lost it (its lease lapsed while the database was out of
 * reach or the process was stopped, and another worker recovered the task) changes nothing.
 */
export type Claim = Pick<TaskRow, 'id' | 'planId' | 'owner' | 'epoch'>;

export interface PlanStore {
  /**
   * Milliseconds a claim (and the hold on a workspace) lasts without renewal; undefined where the
   * store has no leases (SQLite: one machine, whose dead workers `recover` finds by process id).
   */
  readonly leaseMs: number | undefined;
  /** Stores a plan once per workspace: identical content returns the stored plan (`created: false`). */
  addPlan(workspace: string, markdown: string): Promise<{ plan: PlanRow; created: boolean }>;
  plan(id: number): Promise<PlanRow>;
  plans(workspace?: string): Promise<PlanRow[]>;
  /** Plans not yet decomposed into tasks. */
  unplanned(workspace: string): Promise<PlanRow[]>;
  /** Workspaces with open work: a plan to plan, or a task neither finished nor failed. */
  openWorkspaces(): Promise<string[]>;
  /**
   * Stores the planner's tasks and marks the plan planned, in one transaction; false (nothing
   * stored) when the plan was planned already, by another worker.
   */
  setTasks(planId: number, tasks: PlannedTask[]): Promise<boolean>;
  failPlan(planId: number, error: string): Promise<void>;
  tasks(planId?: number): Promise<TaskRow[]>;
  task(id: number): Promise<TaskRow>;
  /**
   * Atomically takes the next task a worker can move on, for `owner`: one further along first
   * (approved, then coded), else a pending one whose prerequisites are all finished; two workers
   * never take the same task. `order` (states to claim from) changes the preference, as phase
   * batching does. With leases, the claim lasts `leaseMs` unless renewed.
   */
  claim(owner: string, workspace: string, order?: TaskState[]): Promise<TaskRow | undefined>;
  /**
   * Renews `owner`'s lease on the workspace and on the task; false when it lost the workspace (it
   * lapsed and another worker took over), and the step in flight must stop without recording. The
   * task's own renewal decides nothing: only the workspace's holder recovers tasks, and a task that
   * just left the held states (its step recorded) is not a loss.
   */
  renew(owner: string, workspace: string, taskId?: number): Promise<boolean>;
  /**
   * Takes or keeps the workspace for `owner`: one worker works a workspace at a time, since its
   * tasks share one worktree and one git index. True when `owner` holds it now.
   */
  hold(workspace: string, owner: string): Promise<boolean>;
  /**
   * Takes the workspace from a holder `alive` says is dead (a worker of this machine whose process
   * is gone) without waiting for its hold to lapse; returns the holder replaced, or undefined when
   * there is none to replace (nobody holds it, or the holder may still run).
   */
  takeOver(workspace: string, owner: string, alive: (owner: string) => boolean): Promise<string | undefined>;
  /** Lets the workspace go, if `owner` holds it. */
  release(workspace: string, owner: string): Promise<void>;
  /**
   * Moves a claimed task to `state`, with whatever else changed; logged. Undefined, and nothing
   * changed, when the claim no longer stands.
   */
  transition(
    claim: Claim,
    state: TaskState,
    update?: TaskUpdate,
    note?: string,
  ): Promise<TaskRow | undefined>;
  /**
   * Fails a claimed task and, with the reason, every task that waits on it (directly or not).
   * Undefined, and nothing changed, when the claim no longer stands.
   */
  fail(claim: Claim, error: string): Promise<TaskRow[] | undefined>;
  /** Appends to the plan's log what the claim's step found; false, and nothing logged, when it no longer stands. */
  record(claim: Claim, kind: string, body: unknown): Promise<boolean>;
  /**
   * Before a step that cannot be taken back (the commit): renews the claim and the workspace's
   * hold for a whole lease and says whether both still stand. Without leases, whether the claim does.
   */
  confirm(claim: Claim, workspace: string): Promise<boolean>;
  /**
   * Puts tasks a dead worker held back in the state they were entered from: whose owner `alive`
   * says is dead (SQLite: every owner; with leases: a worker of this machine whose process is
   * gone), and with leases also those whose lease lapsed.
   */
  recover(workspace: string, alive: (owner: string) => boolean): Promise<TaskRow[]>;
  /** Tasks of the workspace a worker holds now. */
  heldIn(workspace: string): Promise<number>;
  /** Failed tasks (a failed task's dependents are failed too) back to pending, fresh. */
  retryFailed(workspace: string): Promise<number>;
  /**
   * Appends to the plan's log, unconditionally: `task.id` null for what concerns the plan as a
   * whole; what a claimed task's step found goes through `record`.
   */
  log(task: { id: number | null; planId: number }, kind: string, body: unknown): Promise<void>;
  logOf(planId: number, kind?: string): Promise<LogEntry[]>;
}
