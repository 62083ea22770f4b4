import type { Sandbox } from '../sandbox/types.js';
import { sleep } from '../util/clock.js';
import { analysePlan } from './analyst.js';
import { planInParts } from './chunked-plan.js';
import { announce, ClaimLost } from './claim-writes.js';
import type { CoderSessions } from './coder.js';
import type { Limits } from './convergence.js';
import type { GitTrace } from './git-trace.js';
import { keepLeases, type LeaseKeeper } from './lease-keeper.js';
import type { RoleClient } from './llm-call.js';
import type { RoleModels } from './model-swap.js';
import { PhaseBatch } from './phase-batch.js';
import type { PlanInbox } from './plan-inbox.js';
import type { PlanStore } from './plan-store.js';
import type { QualityGateMode } from './quality-gate.js';
import { logSwaps, RunStopped, ready, step } from './steps.js';
import type { PipelineEvent, TaskRow } from './types.js';

export interface PipelineDeps {
  plans: PlanStore;
  workspace: string;
  sandbox: Sandbox;
  planner: RoleClient;
  /** Plan characters one planner request may carry; a longer plan is planned in parts. */
  planChars: number;
  reviewer: RoleClient;
  coder: CoderSessions;
  /** The coder's model, for status displays. */
  coderModel?: string;
  /** Puts each role's model in memory before its phase (LM Studio); unset: the server loads what is asked for. */
  models?: RoleModels;
  /** Coder rounds taken before reviews, and reviews before coder rounds (phase batching); default 1. */
  batch?: number;
  /** The workspace's `plans/` folder, looked at before each step. */
  inbox?: PlanInbox;
  /** When the queue is empty, wait for new plans in the inbox instead of returning. */
  watch?: boolean;
  /** Unset: no commits (the workspace is not a repository, or git is off). */
  git?: GitTrace;
  /** The plan's build/test/lint commands, run by the verifier in the sandbox. */
  commands: string[];
  commandTimeoutMs: number;
  /** LAO's analyst: findings on the repository before a plan is planned (`analyst.ts`). */
  analyst?: boolean;
  /** The files ranked for a task, listed in the coder's first message ('' for none). */
  fileContext?(task: TaskRow, signal?: AbortSignal): Promise<string>;
  /** What the quality gate's findings do (`quality-gate.ts`); unset: off. */
  qualityGate?: QualityGateMode;
  limits: Limits;
  /**
   * Who holds a claimed task (and, with leases, the workspace); `alive` tells whether a holder
   * still runs, as far as this machine can tell (`util/process-identity.ts`).
   */
  owner: string;
  alive(owner: string): boolean;
  emit(event: PipelineEvent): void;
  /**
   * The workspace's pause flag, set by any process (`hearth pipeline pause`, the agent's tools, the
   * gateway): read before each step, waited on while set.
   */
  pause?: { paused(): Promise<boolean>; resumed(signal?: AbortSignal): Promise<void> };
  signal?: AbortSignal;
}

export interface RunSummary {
  recovered: number;
  planned: number;
  steps: number;
  tokens: number;
  /** Why the run stopped with work left (a role's model could not be put in memory). */
  stopped?: string;
  /** The run was stopped (its signal) while it waited for the workspace's pause to be lifted. */
  whilePaused?: boolean;
}

/**
 * Works through the workspace's plans until nothing is left to do: recovers what a dead worker
 * held, then in turn adds the plans dropped into `plans/`, plans new plans, commits them and takes
 * one task phase from the queue; with `watch`, an empty queue waits for new plans. Every transition is
 * committed before the next step, so a kill at any point resumes without losing or redoing work.
 *
 * On a store with leases (PostgreSQL, several machines), one worker works a workspace at a time:
 * its tasks share one worktree and one git index, so two workers' steps at once would mix their
 * changes and race for git's lock. The others stand by and take over once the holder's lease
 * lapses (it died, or lost the database), putting the task it held back in its phase. The model
 * servers a step uses are the pool's (`llm.endpoints`), whichever machine runs it; workspaces are
 * worked in parallel by whichever workers take them.
 */
export async function runPipeline(deps: PipelineDeps): Promise<RunSummary> {
  const summary: RunSummary = { recovered: 0, planned: 0, steps: 0, tokens: 0 };
  const { leaseMs } = deps.plans;
  const keeper =
    leaseMs === undefined
      ? undefined
      : keepLeases({
          ...deps,
          leaseMs,
          onLost: () => deps.emit({ type: 'idle', reason: 'lease_lost' }),
        });
  try {
    // Without leases, a dead worker is found by its process once, at the start; with them, each
    // pass recovers what lapsed (recoverDead in work).
    if (!keeper) await recoverDead(deps, summary);
    await work(deps, summary, keeper);
  } catch (err) {
    if (!(err instanceof RunStopped)) throw err;
    summary.stopped = err.message;
    deps.emit({ type: 'model_note', message: `stopped: ${err.message}` });
  } finally {
    await keeper?.letGo().catch(() => undefined);
  }
  return summary;
}

/** Puts back in their phase the tasks dead workers held, and frees git's lock if one was committing. */
async function recoverDead(deps: PipelineDeps, summary: RunSummary): Promise<void> {
  const recovered = await deps.plans.recover(deps.workspace, deps.alive);
  for (const task of recovered) {
    summary.recovered++;
    announce(deps, task, 'recovered after an interruption');
  }
  await releaseStaleLock(deps, recovered);
}

async function work(deps: PipelineDeps, summary: RunSummary, keeper?: LeaseKeeper): Promise<void> {
  const { plans, workspace } = deps;
  const batch = new PhaseBatch(deps.batch ?? 1);
  /** How long a worker that stands by waits before it looks again. */
  const pauseMs = (plans.leaseMs ?? 3000) / 3;
  let standing = false;
  const checked = new Set<string>();
  while (!deps.signal?.aborted) {
    if (await deps.pause?.paused()) {
      // What was in flight has finished; nothing new is planned or claimed until resumed.
      await keeper?.letGo();
      deps.emit({ type: 'idle', reason: 'paused' });
      await deps.pause!.resumed(deps.signal);
      if (deps.signal?.aborted) summary.whilePaused = true;
      continue;
    }
    if (keeper) {
      // From a holder of this machine whose process is gone at once (a worker restarted after a
      // crash need not wait out its predecessor's lease), saying so.
      if (!(await keeper.hold((from) => deps.emit({ type: 'took_over', from })))) {
        if (!deps.watch && !(await workLeft(plans, workspace))) break;
        if (!standing) deps.emit({ type: 'idle', reason: 'standby' });
        standing = true;
        await sleep(pauseMs, deps.signal);
        continue;
      }
      standing = false;
      await recoverDead(deps, summary);
      await checkSameFolder(deps, checked);
    }
    const pass = keeper ? { ...deps, signal: keeper.iteration() } : deps;
    await pass.inbox?.take();
    await planNew(pass, summary);
    await commitPlans(pass);
    if (pass.signal?.aborted) continue;
    const task = await plans.claim(deps.owner, workspace, batch.order());
    if (!task) {
      // A task a dead worker held comes back once its lease lapses.
      if (keeper && (await plans.heldIn(workspace)) > 0) {
        await sleep(pauseMs, deps.signal);
        continue;
      }
      if (!deps.watch || !deps.inbox) break;
      deps.emit({ type: 'idle' });
      await deps.inbox.changed(deps.signal);
      continue;
    }
    keeper?.holding(task.id);
    announce(deps, task);
    batch.took(task.state);
    try {
      summary.tokens += await step(pass, task);
    } catch (err) {
      if (!(err instanceof ClaimLost)) throw err;
      // Another worker has the task now: this step ends here, with nothing of it recorded.
      deps.emit({
        type: 'claim_lost',
        planId: task.planId,
        taskId: task.id,
        seq: task.seq,
        refused: err.refused,
      });
      continue;
    } finally {
      keeper?.holding(undefined);
    }
    await logSwaps(deps, task);
    summary.steps++;
  }
}

/**
 * Workers on several machines must share the workspace's folder (a network mount), not each have
 * a clone at the same path: a task's phases and its prerequisites' commits must be in the one
 * worktree the next phase runs in. A committed plan whose commit this folder lacks says it is
 * another copy, and the run stops before it touches anything.
 */
async function checkSameFolder(deps: PipelineDeps, checked: Set<string>): Promise<void> {
  if (!deps.git) return;
  for (const plan of await deps.plans.plans(deps.workspace)) {
    const hash = ((await deps.plans.logOf(plan.id, 'plan_commit'))[0]?.body as { hash?: string } | undefined)
      ?.hash;
    if (!hash || checked.has(hash)) continue;
    if (!(await deps.git.has(hash, deps.signal))) {
      throw new RunStopped(
        `plan #${plan.id} was committed as ${hash.slice(0, 10)} in a folder at ${deps.workspace} that is not this one (another clone?). Workers of one workspace must share its folder, e.g. over a network mount.`,
      );
    }
    checked.add(hash);
  }
}

/** Whether the workspace has plans to plan or tasks not yet finished or failed. */
async function workLeft(plans: PlanStore, workspace: string): Promise<boolean> {
  return (await plans.openWorkspaces()).includes(workspace);
}

/**
 * A worker killed while committing leaves git's index lock, and every later commit would fail on
 * it. It is removed when a dead worker was committing (a task recovered from `committing`, or a
 * plan planned but never committed) and no live worker holds a task of this workspace.
 */
async function releaseStaleLock(deps: PipelineDeps, recovered: TaskRow[]): Promise<void> {
  if (!deps.git) return;
  const { plans, workspace } = deps;
  let planUncommitted = false;
  for (const p of await plans.plans(workspace))
    if (p.state === 'planned' && (await plans.logOf(p.id, 'plan_commit')).length === 0)
      planUncommitted = true;
  if (!planUncommitted && !recovered.some((t) => t.state === 'approved')) return;
  if ((await plans.heldIn(workspace)) > 0) return;
  await deps.git.releaseStaleLock(deps.signal);
}

/** Plans the workspace's new plans (in parts where one is too big for the window). */
async function planNew(deps: PipelineDeps, summary: RunSummary): Promise<void> {
  const { plans } = deps;
  for (const plan of await plans.unplanned(deps.workspace)) {
    if (deps.signal?.aborted) return;
    await ready(deps, { id: null, planId: plan.id }, 'planner');
    if (deps.signal?.aborted) return;
    const analysed = deps.analyst ? await analysePlan(deps, plan) : { plan, tokens: 0 };
    summary.tokens += analysed.tokens;
    if (deps.signal?.aborted) return;
    const result = await planInParts(
      deps.planner,
      plans,
      analysed.plan,
      deps.planChars,
      deps.signal,
      (part, parts) => deps.emit({ type: 'plan_part', planId: plan.id, part, parts }),
    );
    summary.tokens += result.tokens;
    if (deps.signal?.aborted) return;
    await plans.log({ id: null, planId: plan.id }, 'tokens', { role: 'planner', tokens: result.tokens });
    if (result.ok) {
      // False when another worker planned it meanwhile: its tasks stand, these are dropped.
      if (!(await plans.setTasks(plan.id, result.tasks))) continue;
      summary.planned++;
      deps.emit({ type: 'plan_planned', planId: plan.id, tasks: result.tasks.length, parts: result.parts });
    } else {
      await plans.failPlan(plan.id, result.error);
      deps.emit({ type: 'plan_failed', planId: plan.id, error: result.error });
    }
  }
}

/**
 * Commits each planned plan's plan and task list once, before any of its tasks: a plan planned by a
 * run that was killed before its commit gets it from the next run.
 */
async function commitPlans(deps: PipelineDeps): Promise<void> {
  if (!deps.git) return;
  for (const plan of await deps.plans.plans(deps.workspace)) {
    if (plan.state !== 'planned' || (await deps.plans.logOf(plan.id, 'plan_commit')).length > 0) continue;
    const planLog = { id: null, planId: plan.id };
    try {
      const hash = await deps.git.commitPlan(plan, await deps.plans.tasks(plan.id), deps.signal);
      if (deps.signal?.aborted) return;
      if (hash) {
        await deps.plans.log(planLog, 'plan_commit', { hash });
        deps.emit({ type: 'plan_commit', planId: plan.id, hash });
      }
    } catch (err) {
      // The tasks can still be done; the failure is said, logged and not tried again.
      const error = (err as Error).message;
      await deps.plans.log(planLog, 'plan_commit', { error });
      deps.emit({ type: 'plan_commit_failed', planId: plan.id, error });
    }
  }
}
