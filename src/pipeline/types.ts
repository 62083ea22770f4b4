import { z } from 'zod';
import type { PermissionMode } from '../permissions/modes.js';
import type { TaskState } from '../store/pipeline/task-states.js';

export type { TaskState } from '../store/pipeline/task-states.js';
export { RECOVER_TO } from '../store/pipeline/task-states.js';

/** One micro-task as the planner must write it; `depends_on` names earlier tasks by their 1-based number. */
export const plannedTaskSchema = z.object({
  title: z.string().trim().min(1),
  description: z.string().default(''),
  files: z.array(z.string().trim().min(1)).default([]),
  depends_on: z.array(z.number().int().positive()).default([]),
  acceptance: z.array(z.string()).default([]),
});
export const planReplySchema = z.object({ tasks: z.array(plannedTaskSchema).min(1) });
export type PlannedTask = z.infer<typeof plannedTaskSchema>;

export const findingSchema = z.object({
  severity: z.enum(['critical', 'major', 'minor']).catch('major'),
  message: z.string().min(1),
  file: z.string().optional(),
});
export const verdictSchema = z.object({
  verdict: z.enum(['approve', 'rework', 'fail']),
  findings: z.array(findingSchema).default([]),
  summary: z.string().default(''),
});
export type Finding = z.infer<typeof findingSchema>;
export type Verdict = z.infer<typeof verdictSchema>;

export interface TaskRow {
  id: number;
  planId: number;
  seq: number;
  title: string;
  description: string;
  files: string[];
  acceptance: string[];
  dependsOn: number[];
  state: TaskState;
  outcome: 'done' | 'done_with_debt' | null;
  sessionId: string | null;
  rework: number;
  /** Findings for the coder's next round (the verifier's or the reviewer's), in words. */
  feedback: string | null;
  findings: Finding[];
  /** How often each error signature came back. */
  signatures: Record<string, number>;
  summary: string | null;
  error: string | null;
  commitHash: string | null;
  /** The worker that holds the task (in a held state), else null. */
  owner: string | null;
  /** How often the task was claimed: a claim is its owner and this number (see `Claim`). */
  epoch: number;
}

export interface PlanRow {
  id: number;
  hash: string;
  workspace: string;
  title: string;
  markdown: string;
  state: 'new' | 'planned' | 'failed';
  error: string | null;
}

/**
 * What the pipeline reports as it goes; plain JSON like the agent's events. Every surface shows
 * the same events: `hearth pipeline run` (a line each, or `--json`), the journal in the store
 * (`journal.ts`), the gateway's activity feed and the web UI.
 */
export type PipelineEvent =
  /** A plan stored (`file` when it came from `plans/` or `hearth plan add`); `created` false: known already. */
  | { type: 'plan_added'; planId: number; file?: string; created: boolean }
  | { type: 'plan_skipped'; file: string; reason: string }
  /**
   * Nothing to claim: the queue is empty, or (`reason`) the workspace is paused, another worker
   * works it (`standby`: this one takes over if that one's lease lapses), or this worker's lease
   * lapsed and another took over (`lease_lost`: the step in flight stopped unrecorded).
   */
  | { type: 'idle'; reason?: 'paused' | 'standby' | 'lease_lost' }
  /**
   * The worker that held the workspace runs on this machine no more (it was killed): taken over
   * at once, without waiting for its lease to lapse.
   */
  | { type: 'took_over'; from: string }
  /**
   * This worker no longer holds a task it worked on (its lease lapsed, while the database was out
   * of reach or the process stopped, and another worker recovered it): the store refused what it
   * was to record (`refused`: a state, `commit`, or a log entry's kind), and the step stopped there.
   */
  | { type: 'claim_lost'; planId: number; taskId: number; seq: number; refused: string }
  | { type: 'paused' }
  | { type: 'resumed' }
  /** One part of a plan too big for one request was planned (1-based). */
  | { type: 'plan_part'; planId: number; part: number; parts: number }
  | { type: 'plan_planned'; planId: number; tasks: number; parts: number }
  | { type: 'plan_failed'; planId: number; error: string }
  /** The analyst's findings on a plan (`analyst.ts`), in `file`; `error`: none came, the plan goes on without. */
  | { type: 'plan_analysed'; planId: number; file?: string; error?: string }
  | { type: 'task_state'; planId: number; taskId: number; seq: number; state: TaskState; note?: string }
  | { type: 'task_role'; taskId: number; role: 'planner' | 'coder' | 'verifier' | 'reviewer'; model?: string }
  /** The mechanical checks ran; no findings means they passed and the reviewer is next. */
  | { type: 'task_verified'; taskId: number; seq: number; findings: string[] }
  /** The quality gate's findings on a coder round (`quality-gate.ts`); `blocked`: sent back to the coder. */
  | {
      type: 'task_quality';
      taskId: number;
      seq: number;
      mode: 'warn' | 'block';
      findings: Finding[];
      blocked: boolean;
    }
  | {
      type: 'task_reviewed';
      taskId: number;
      seq: number;
      verdict: Verdict['verdict'];
      findings: Finding[];
      summary: string;
    }
  /** Failed tasks (and the dependents that failed with them) put back in the queue. */
  | { type: 'tasks_retried'; count: number }
  | { type: 'plan_commit'; planId: number; hash: string }
  | { type: 'plan_commit_failed'; planId: number; error: string }
  | { type: 'commit'; taskId: number; hash: string }
  /** A role's model put in memory (LM Studio), the others unloaded; `ms` includes the memory gate. */
  | {
      type: 'model_swap';
      planId: number;
      taskId: number | null;
      loaded?: string;
      unloaded: string[];
      ms: number;
    }
  /** Said once per run: how role models are handled on this server, or why a swap stopped the run. */
  | { type: 'model_note'; message: string }
  /**
   * Said at a run's start when the coder's permission mode asks about calls, which nobody can
   * answer during a pipeline run: what will be declined, and how to let it run.
   */
  | { type: 'permission_note'; mode: Exclude<PermissionMode, 'auto'>; message: string }
  /** Calls of a coder round declined for want of an answer (each as an approval would show it). */
  | { type: 'task_declined'; planId: number; taskId: number; seq: number; calls: string[] };
