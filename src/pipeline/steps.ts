/**
 * One phase of one claimed task, as a pipeline worker (worker.ts) takes it: the coder's round,
 * the verifier's checks and the reviewer's verdict, or the commit; each records what it found
 * while the claim stands (claim-writes.ts) and moves the task on. Each role's model is put in
 * memory first (with `deps.models`), its swaps logged with the plan.
 */
import { ClaimLost, fail, move, record } from './claim-writes.js';
import { runCoder } from './coder.js';
import { type Next, nextAfter } from './convergence.js';
import type { SwapRole } from './model-swap.js';
import { blocks, findingLine, qualityFindings } from './quality-gate.js';
import { qualityReportFile, reviewLog } from './report.js';
import { reviewTask } from './reviewer.js';
import { changedSince, commitPaths, dirtyNow } from './task-paths.js';
import { type Finding, RECOVER_TO, type TaskRow, type TaskState } from './types.js';
import { afterDeclines } from './unattended.js';
import { verifyTask } from './verifier.js';
import type { PipelineDeps } from './worker.js';

/**
 * The run cannot go on here: a role's model could not be put in memory (its task back in its
 * phase), or this machine's workspace is not the folder the plan was committed in.
 */
export class RunStopped extends Error {}

/** Puts the role's model in memory (with `deps.models`), logging the swaps with the plan. */
export async function ready(deps: PipelineDeps, at: TaskRow | { id: null; planId: number }, role: SwapRole) {
  if (!deps.models) return;
  const result = await deps.models.ready(role, deps.signal);
  await logSwaps(deps, at, at.id !== null);
  if (result.ok || deps.signal?.aborted) return;
  const back = at.id === null ? undefined : RECOVER_TO[(at as TaskRow).state];
  if (back) await move(deps, at as TaskRow, back, {}, `the ${role}'s model could not be loaded`);
  throw new RunStopped(`the ${role}'s model could not be put in memory: ${result.error}`);
}

/** Logs the swaps done since the last call; `claimed`: with the task `at`, while the claim stands. */
export async function logSwaps(
  deps: PipelineDeps,
  at: TaskRow | { id: null; planId: number },
  claimed = false,
): Promise<void> {
  for (const swap of deps.models?.drain() ?? []) {
    if (claimed) await record(deps, at as TaskRow, 'model_swap', swap);
    else await deps.plans.log(at, 'model_swap', swap);
    deps.emit({ type: 'model_swap', planId: at.planId, taskId: at.id, ...swap });
  }
}

/** One phase of one claimed task; returns the tokens it spent. */
export async function step(deps: PipelineDeps, task: TaskRow): Promise<number> {
  if (task.state === 'coding') return code(deps, task);
  if (task.state === 'verifying') return verifyAndReview(deps, task);
  await commit(deps, task);
  return 0;
}

async function code(deps: PipelineDeps, task: TaskRow): Promise<number> {
  await role(deps, task, 'coder', deps.coderModel);
  await ready(deps, task, 'coder');
  if (deps.signal?.aborted) return 0;
  const prerequisites = await Promise.all(task.dependsOn.map((id) => deps.plans.task(id)));
  const before = deps.git && (await dirtyNow(deps.git, deps.signal));
  const context = task.sessionId ? '' : await deps.fileContext?.(task, deps.signal);
  const result = await runCoder(deps.coder, task, prerequisites, deps.signal, context);
  await record(deps, task, 'tokens', { role: 'coder', tokens: result.tokens });
  if (result.declined.length > 0) {
    await record(deps, task, 'declined', { calls: result.declined });
    deps.emit({
      type: 'task_declined',
      planId: task.planId,
      taskId: task.id,
      seq: task.seq,
      calls: result.declined,
    });
  }
  if (deps.signal?.aborted) return result.tokens;
  const after = before && deps.git && (await dirtyNow(deps.git, deps.signal));
  if (before && after) await record(deps, task, 'changed', { paths: changedSince(before, after) });
  if (result.ok) {
    await move(deps, task, 'coded', { sessionId: result.sessionId, summary: result.summary, feedback: null });
  } else {
    await settle(
      deps,
      { ...task, sessionId: result.sessionId },
      nextAfter(task, { verifier: [result.error] }, deps.limits),
    );
  }
  return result.tokens;
}

async function verifyAndReview(deps: PipelineDeps, task: TaskRow): Promise<number> {
  await role(deps, task, 'verifier');
  const todos = task.sessionId ? await deps.coder.state(task.sessionId, 'todos') : undefined;
  const findings = await verifyTask({
    workspace: deps.workspace,
    sandbox: deps.sandbox,
    files: task.files,
    todos: Array.isArray(todos) ? todos : [],
    commands: deps.commands,
    timeoutMs: deps.commandTimeoutMs,
    signal: deps.signal,
  });
  if (deps.signal?.aborted) return 0;
  await record(deps, task, 'verify', { findings });
  deps.emit({ type: 'task_verified', taskId: task.id, seq: task.seq, findings });
  if (findings.length > 0) {
    await settle(deps, task, nextAfter(task, { verifier: findings }, deps.limits));
    return 0;
  }
  const quality = await qualityGate(deps, task);
  if (quality === 'blocked' || deps.signal?.aborted) return 0;
  const reviewing = await move(deps, task, 'reviewing');
  await role(deps, task, 'reviewer', deps.reviewer.llm.model);
  await ready(deps, reviewing, 'reviewer');
  if (deps.signal?.aborted) return 0;
  const answer = await reviewTask(deps.reviewer, deps.workspace, reviewing, deps.signal, quality);
  await record(deps, task, 'tokens', { role: 'reviewer', tokens: answer.tokens });
  if (deps.signal?.aborted) return answer.tokens;
  if (!answer.ok) {
    await fail(deps, task, `the reviewer gave no verdict: ${answer.error}`);
    return answer.tokens;
  }
  await record(deps, task, 'review', answer.value);
  deps.emit({ type: 'task_reviewed', taskId: task.id, seq: task.seq, ...answer.value });
  await settle(deps, reviewing, nextAfter(reviewing, { verdict: answer.value }, deps.limits));
  return answer.tokens;
}

/**
 * The quality gate on the files the task names and its rounds changed: its findings recorded and
 * announced; in block mode a placeholder sends the task back to the coder ('blocked'), otherwise
 * the findings go to the reviewer.
 */
async function qualityGate(deps: PipelineDeps, task: TaskRow): Promise<Finding[] | 'blocked'> {
  const mode = deps.qualityGate ?? 'off';
  if (mode === 'off') return [];
  const files = new Set(task.files);
  for (const entry of await deps.plans.logOf(task.planId, 'changed'))
    if (entry.taskId === task.id) for (const p of (entry.body as { paths: string[] }).paths) files.add(p);
  const findings = await qualityFindings(deps.workspace, [...files]);
  const blocked = blocks(mode, findings);
  await record(deps, task, 'quality', { mode, findings, blocked });
  deps.emit({ type: 'task_quality', taskId: task.id, seq: task.seq, mode, findings, blocked });
  if (!blocked) return findings;
  const lines = [
    'The quality gate found unfinished work; finish it (no placeholders, stubs or empty bodies):',
    ...findings.map(findingLine),
  ];
  await settle(deps, task, nextAfter(task, { verifier: lines }, deps.limits));
  return 'blocked';
}

async function commit(deps: PipelineDeps, task: TaskRow): Promise<void> {
  const final: TaskState = task.outcome ?? 'done';
  try {
    const plan = deps.git ? await deps.plans.plan(task.planId) : undefined;
    const log = plan ? await reviewLog(deps.plans, plan) : '';
    const quality = plan ? await qualityReportFile(deps.plans, plan) : undefined;
    const paths = deps.git && (await commitPaths(deps.plans, deps.git, deps.workspace, task, deps.signal));
    // A commit cannot be taken back: made only with the claim renewed for a whole lease just before.
    if (!(await deps.plans.confirm(task, deps.workspace))) throw new ClaimLost(task, 'commit');
    const hash = await deps.git?.commitTask(
      task,
      { reviewLog: log, ...(quality ? { qualityReport: quality } : {}), ...(paths ? { paths } : {}) },
      deps.signal,
    );
    if (deps.signal?.aborted) return;
    if (hash) deps.emit({ type: 'commit', taskId: task.id, hash });
    await move(deps, task, final, { commitHash: hash ?? null });
  } catch (err) {
    if (err instanceof ClaimLost) throw err;
    await fail(deps, task, (err as Error).message);
  }
}

/** Which role works on a task now, with its model: an event, and logged for `pipeline status`. */
async function role(
  deps: PipelineDeps,
  task: TaskRow,
  name: 'coder' | 'verifier' | 'reviewer',
  model?: string,
): Promise<void> {
  await record(deps, task, 'role', { role: name, ...(model ? { model } : {}) });
  deps.emit({ type: 'task_role', taskId: task.id, role: name, ...(model ? { model } : {}) });
}

/** Moves a task on after a round was judged (or after the coder failed), declines considered. */
async function settle(deps: PipelineDeps, task: TaskRow, judged: Next): Promise<void> {
  const next = await afterDeclines(deps.plans, task, judged);
  if (next.state === 'failed') await fail(deps, task, next.error);
  else if (next.state === 'approved')
    await move(deps, task, 'approved', { outcome: next.outcome, findings: next.findings });
  else {
    const { feedback, rework, signatures } = next;
    await move(deps, task, 'pending', { sessionId: task.sessionId, feedback, rework, signatures });
  }
}
