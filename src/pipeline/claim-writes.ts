/**
 * What a worker writes about the task it claimed, each write conditional on the claim still
 * standing (`PlanStore.transition`, `fail`, `record`): a refused one throws `ClaimLost`, which
 * ends the step with nothing more of it recorded (`worker.ts`), and every move is announced as a
 * `task_state` event.
 */
import type { Claim, PlanStore, TaskUpdate } from './plan-store.js';
import type { PipelineEvent, TaskRow, TaskState } from './types.js';

type Writer = { plans: PlanStore; emit(event: PipelineEvent): void };

/**
 * The store refused a write of a claimed task: the claim no longer stands (its lease lapsed and
 * another worker recovered the task). `refused`: the state it was to move to, `commit`, or the
 * kind of log entry.
 */
export class ClaimLost extends Error {
  constructor(
    task: { seq: number },
    readonly refused: string,
  ) {
    super(`task #${task.seq} is no longer this worker's`);
  }
}

export async function move(
  deps: Writer,
  task: TaskRow,
  state: TaskState,
  update: TaskUpdate = {},
  note?: string,
): Promise<TaskRow> {
  const moved = await deps.plans.transition(task, state, update, note);
  if (!moved) throw new ClaimLost(task, state);
  announce(deps, moved);
  return moved;
}

export async function fail(deps: Writer, task: TaskRow, error: string): Promise<void> {
  const failed = await deps.plans.fail(task, error);
  if (!failed) throw new ClaimLost(task, 'failed');
  for (const t of failed) announce(deps, t, t.error ?? undefined);
}

/** Logs what the step of the claimed `task` found. */
export async function record(deps: Writer, task: Claim & { seq: number }, kind: string, body: unknown) {
  if (!(await deps.plans.record(task, kind, body))) throw new ClaimLost(task, kind);
}

export function announce(deps: Writer, task: TaskRow, note?: string): void {
  deps.emit({
    type: 'task_state',
    planId: task.planId,
    taskId: task.id,
    seq: task.seq,
    state: task.state,
    ...(note ? { note } : {}),
  });
}
