/**
 * The pipeline runs unattended: nobody answers approval questions, so whatever the coder's
 * permission mode would ask about is declined. The run says so at its start when its mode asks
 * (before any model time is spent), and a task whose calls were declined names them and the fix,
 * so that it never fails as a puzzle ("alpha.txt does not exist").
 */
import type { Config } from '../config/schema.js';
import type { Approver } from '../permissions/gate.js';
import type { PermissionMode } from '../permissions/modes.js';
import type { Next } from './convergence.js';
import type { PlanStore } from './plan-store.js';
import type { PipelineEvent, TaskRow } from './types.js';

/** The setting that lets the coder's calls run in every run; `hearth worker` takes no --yolo, so it needs it. */
const SETTING = '"pipeline": {"permission_mode": "auto"} in the config (hearth worker reads it too)';

/** How a user lets the coder's calls run. */
export const UNATTENDED_FIX = `hearth pipeline run --yolo, or set ${SETTING}`;

/** Unattended: nobody is there to answer, so calls the permission mode would ask about are declined. */
export const declineUnattended: Approver = async () => ({
  decision: 'deny',
  reason:
    'The pipeline runs unattended and this call needs approval. Do the task with the tools you may use without asking.',
});

/** The coder's mode: the pipeline's own (which `--yolo` sets for a run), else the sessions' one. */
export function coderMode(config: Pick<Config, 'pipeline' | 'permissions'>): PermissionMode {
  return config.pipeline.permission_mode ?? config.permissions.mode;
}

/** What a run says at its start about its mode; undefined when the mode declines nothing for want of an answer. */
export function unattendedNote(
  mode: PermissionMode,
  allowRules: number,
): Extract<PipelineEvent, { type: 'permission_note' }> | undefined {
  if (mode === 'auto') return undefined;
  const what =
    mode === 'plan'
      ? 'its file changes and commands are refused'
      : `nobody can approve calls during a pipeline run, so ${mode === 'manual' ? 'every call it makes' : 'its file changes and commands'} will be declined${allowRules > 0 ? ' (except what permissions.allow covers)' : ''}`;
  return {
    type: 'permission_note',
    mode,
    message: `The coder runs in permission mode ${mode}: ${what}. To let them run: ${UNATTENDED_FIX}.`,
  };
}

/**
 * What becomes of a task judged `next` after a coder round whose calls were declined: work sent
 * back would meet the same refusals (nobody answers during a run), so it fails at once, naming the
 * calls and the fix, as does a failure they may explain. An approval stands.
 */
export async function afterDeclines(plans: PlanStore, task: TaskRow, next: Next): Promise<Next> {
  if (next.state === 'approved') return next;
  const calls = await declinedInLastRound(plans, task);
  if (calls.length === 0) return next;
  const found = next.state === 'failed' ? next.error : next.feedback.replace(/\n+(- )?/g, ' ');
  return {
    state: 'failed',
    error: `the coder's calls were declined (nobody can approve them during a pipeline run): ${calls.join(', ')}. To let them run: hearth pipeline retry-failed, then hearth pipeline run --yolo (or set ${SETTING} first). Found meanwhile: ${found}`,
  };
}

/** The calls declined in the task's latest coder round: logged after its last move into `coding`. */
async function declinedInLastRound(plans: PlanStore, task: TaskRow): Promise<string[]> {
  const log = (await plans.logOf(task.planId)).filter((e) => e.taskId === task.id);
  const round = log.findLastIndex(
    (e) => e.kind === 'state' && (e.body as { state?: string }).state === 'coding',
  );
  const calls = log
    .slice(round + 1)
    .filter((e) => e.kind === 'declined')
    .flatMap((e) => (e.body as { calls: string[] }).calls);
  return [...new Set(calls)];
}
