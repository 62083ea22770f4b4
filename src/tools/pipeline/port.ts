/**
 * The workspace's pipeline as the pipeline tools reach it. src/pipeline implements it (`steering.ts`);
 * it is set on sessions of a workspace that has a pipeline. Every method only adds to the queue or
 * changes its pause flag: nothing here can drop work, change settings or approve a task.
 */
export interface PipelinePort {
  /** Plans, tasks by state, the current role and model, tokens, paused or not: as text. */
  status(): Promise<string>;
  /** Stores a plan as `hearth plan add` does; the same content is recognised, not stored twice. */
  addPlan(markdown: string): Promise<{ id: number; title: string; state: string; created: boolean }>;
  /** Failed tasks (and the dependents that failed with them) back to pending; how many. */
  retryFailed(): Promise<number>;
  /** False when it was paused (or running) already. */
  setPaused(paused: boolean): Promise<boolean>;
}
