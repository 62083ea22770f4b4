/**
 * Which files are a task's, when several tasks' work shares the worktree. With phase batching
 * (`phase-batch.ts`) tasks are coded before the ones before them are committed, so "commit
 * everything changed" would put one task's files into another's commit. Each coder round logs the
 * paths it changed (what git saw changed after the round and not before it); a task's commit then
 * takes its declared files and those paths. A path another round had already changed when this
 * one changed it again stays with the first task that commits it: git cannot tell two tasks'
 * edits of one file apart without separate worktrees.
 */
import path from 'node:path';
import type { GitTrace } from './git-trace.js';
import type { PlanStore } from './plan-store.js';
import type { TaskRow, TaskState } from './types.js';

/** States of a task whose coder work sits in the worktree, not yet committed. */
const UNCOMMITTED: TaskState[] = ['coded', 'verifying', 'reviewing', 'approved', 'committing'];

/** What git sees changed now; undefined when it cannot say (the round is then not attributed). */
export async function dirtyNow(git: GitTrace, signal?: AbortSignal): Promise<string[] | undefined> {
  try {
    return await git.dirty(signal);
  } catch {
    return undefined;
  }
}

/** The paths a coder round changed: dirty after it, not before. */
export function changedSince(before: string[], after: string[]): string[] {
  const was = new Set(before);
  return after.filter((p) => !was.has(p));
}

/**
 * The paths `task`'s commit takes: undefined (everything) when no other task's work is in the
 * worktree, else its declared files and the paths its rounds changed, as far as they hold changes.
 */
export async function commitPaths(
  plans: PlanStore,
  git: GitTrace,
  workspace: string,
  task: TaskRow,
  signal?: AbortSignal,
): Promise<string[] | undefined> {
  const all: TaskRow[] = [];
  for (const p of await plans.plans(workspace)) all.push(...(await plans.tasks(p.id)));
  const others = all
    .filter((t) => t.id !== task.id && t.sessionId !== null)
    .some((t) => UNCOMMITTED.includes(t.state) || t.state === 'pending' || t.state === 'coding');
  if (!others) return undefined;
  const own = new Set(task.files.map((f) => path.posix.normalize(f).replace(/^\.\//, '')));
  for (const entry of await plans.logOf(task.planId, 'changed'))
    if (entry.taskId === task.id) for (const p of (entry.body as { paths: string[] }).paths) own.add(p);
  const dirty = await git.dirty(signal);
  return dirty.filter((p) => own.has(p));
}
