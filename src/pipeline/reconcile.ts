/**
 * The queue reconciled with the workspace (LMAgent's task_reconcile, for the pipeline's tasks):
 * what the queue says of each task against what the workspace shows. A finished task whose named
 * files are gone or whose commit the repository lacks was undone since; an open or failed task
 * whose files are all there may be done already (by hand, or by a run whose record was lost).
 * `hearth pipeline reconcile` prints it; `--fix` puts the failed ones of the second kind back in the
 * queue (retry-failed), where the coder finds the work in place and the reviewer judges it.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { PlanStore } from './plan-store.js';
import type { TaskRow } from './types.js';

export type Standing =
  /** The queue and the workspace agree. */
  | 'consistent'
  /** Finished, but files it names are missing or its commit is not in the repository. */
  | 'undone'
  /** Not finished (open or failed), yet every file it names is there. */
  | 'present';

export interface Reconciled {
  planId: number;
  seq: number;
  title: string;
  state: TaskRow['state'];
  standing: Standing;
  /** Files the task names that the workspace lacks. */
  missing: string[];
  /** The task's commit, when the repository lacks it. */
  lostCommit?: string;
}

export async function reconcile(
  plans: PlanStore,
  workspace: string,
  hasCommit: (hash: string) => Promise<boolean>,
): Promise<Reconciled[]> {
  const out: Reconciled[] = [];
  for (const plan of await plans.plans(workspace)) {
    for (const task of await plans.tasks(plan.id)) {
      // A path outside the workspace (the planner wrote it) counts as missing: nothing is looked up there.
      const missing = task.files.filter((f) => {
        const abs = path.resolve(workspace, f);
        return path.relative(workspace, abs).startsWith('..') || !existsSync(abs);
      });
      const finished = task.state === 'done' || task.state === 'done_with_debt';
      const lostCommit =
        finished && task.commitHash && !(await hasCommit(task.commitHash)) ? task.commitHash : undefined;
      const standing: Standing = finished
        ? missing.length > 0 || lostCommit
          ? 'undone'
          : 'consistent'
        : task.files.length > 0 &&
            missing.length === 0 &&
            (task.state === 'pending' || task.state === 'failed')
          ? 'present'
          : 'consistent';
      out.push({
        planId: plan.id,
        seq: task.seq,
        title: task.title,
        state: task.state,
        standing,
        missing,
        ...(lostCommit ? { lostCommit } : {}),
      });
    }
  }
  return out;
}

/** The reconciliation in lines: the tasks that disagree, or that all agree. */
export function describeReconciled(rows: readonly Reconciled[]): string {
  if (rows.length === 0) return 'No tasks in this workspace.';
  const off = rows.filter((r) => r.standing !== 'consistent');
  if (off.length === 0) return `All ${rows.length} task(s) agree with the workspace.`;
  const lines = off.map((r) => {
    const name = `plan #${r.planId} task #${r.seq} ${r.title} (${r.state.replace(/_/g, ' ')})`;
    if (r.standing === 'present') return `${name}: its files are all there; it may be done already`;
    const why = [
      r.missing.length > 0 ? `missing ${r.missing.join(', ')}` : '',
      r.lostCommit ? `commit ${r.lostCommit.slice(0, 10)} not in the repository` : '',
    ].filter(Boolean);
    return `${name}: recorded as finished, but ${why.join('; ')}`;
  });
  return [`${off.length} of ${rows.length} task(s) disagree with the workspace:`, ...lines].join('\n');
}
