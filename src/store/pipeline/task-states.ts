/**
 * Where a task is. `coding`, `verifying`, `reviewing` and `committing` are held by a running worker;
 * after a crash they go back to the state they were entered from (see RECOVER_TO).
 */
export type TaskState =
  | 'pending'
  | 'coding'
  | 'coded'
  | 'verifying'
  | 'reviewing'
  | 'approved'
  | 'committing'
  | 'done'
  | 'done_with_debt'
  | 'failed';

export const RECOVER_TO: Partial<Record<TaskState, TaskState>> = {
  coding: 'pending',
  verifying: 'coded',
  reviewing: 'coded',
  committing: 'approved',
};

export const FINISHED: readonly TaskState[] = ['done', 'done_with_debt'];
