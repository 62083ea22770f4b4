/**
 * The pipeline's durable queue as every part of the pipeline sees it: plans, their tasks with
 * dependencies, the plan's log, and (for several machines) leases. Two backends: the session
 * database (`sqlite-plan-store.ts`, one machine) and the shared PostgreSQL database
 * (`postgres-plan-store.ts`, several machines); `storage.ts` picks one from the config. Every
 * change is one statement or one transaction, so a process killed at any point leaves a state
 * `recover` resumes from.
 */
import { createHash } from 'node:crypto';
import type { Finding, PlannedTask, PlanRow, TaskRow, TaskState } from './types.js';

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

/** States a claim moves a task into, by the state it is claimed from, in order of preference. */
const CLAIMS: Array<[from: TaskState, to: TaskState]> = [
  ['approved', 'committing'],
  ['coded', 'verifying'],
  ['pending', 'coding'],
];

/** The claims to try, in order, for a preference `order` of states (phase batching). */
export function claimOrder(order?: TaskState[]): Array<[from: TaskState, to: TaskState]> {
  if (!order) return CLAIMS;
  return CLAIMS.filter(([from]) => order.includes(from)).sort(
    (a, b) => order.indexOf(a[0]) - order.indexOf(b[0]),
  );
}

/** States a worker holds a task in. */
export const HELD: readonly TaskState[] = ['coding', 'verifying', 'reviewing', 'committing'];

/** A plan's identity in its workspace: its text without line-ending and edge differences. */
export function planHash(markdown: string): string {
  return createHash('sha256').update(markdown.replace(/\r\n/g, '\n').trim()).digest('hex');
}

export function planTitle(markdown: string): string {
  return /^#+\s*(.+)$/m.exec(markdown)?.[1]?.trim() ?? markdown.trim().split('\n')[0]?.slice(0, 80) ?? '';
}

/** The columns a `TaskUpdate` sets, with their stored values. */
export function updateColumns(update: TaskUpdate): Array<[column: string, value: unknown]> {
  const cols: Array<[string, unknown]> = [];
  if ('outcome' in update) cols.push(['outcome', update.outcome]);
  if ('sessionId' in update) cols.push(['session_id', update.sessionId]);
  if ('rework' in update) cols.push(['rework', update.rework]);
  if ('feedback' in update) cols.push(['feedback', update.feedback]);
  if ('findings' in update) cols.push(['findings', JSON.stringify(update.findings)]);
  if ('signatures' in update) cols.push(['signatures', JSON.stringify(update.signatures)]);
  if ('summary' in update) cols.push(['summary', update.summary]);
  if ('error' in update) cols.push(['error', update.error]);
  if ('commitHash' in update) cols.push(['commit_hash', update.commitHash]);
  return cols;
}

/** A task row as both backends store it. */
export interface RawTask {
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
  owner: string | null;
  epoch: number;
  /** Prerequisite ids, comma-separated. */
  deps: string | null;
}

export function toTask(r: RawTask): TaskRow {
  return {
    id: Number(r.id),
    planId: Number(r.plan_id),
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
    owner: r.owner,
    epoch: Number(r.epoch),
  };
}

/** Why a dependent of a failed task failed. */
export function prerequisiteFailed(cause: TaskRow, error: string): string {
  return `prerequisite task #${cause.seq} (${cause.title}) failed: ${cause.error ?? error}`;
}
