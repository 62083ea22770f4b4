/**
 * The project's state file and lab notebook (wyrmspire's project state machine and notebook, LAO's
 * PROJECT.md): at each milestone of a run (a plan planned, a task's state, a review, a quality or
 * verifier finding, a commit) the pipeline rewrites `.hearth/PROJECT.md` (where the project stands:
 * its phase, each plan and task) and appends a line to `.hearth/notebook.md` (what was tried and
 * what came of it, never rewritten). Both are written by Hearth on the host, in the workspace's
 * `.hearth/`, which sandboxed commands cannot write: the record is the pipeline's, not the model's.
 * Nothing reads them as settings. A symlink in their place is refused, not followed.
 *
 * They are written only between the coder's rounds (on events, never while a coder round runs), so
 * they are never taken for the task's own changes.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, rename } from 'node:fs/promises';
import path from 'node:path';
import type { PlanStore } from './plan-store.js';
import type { PipelineEvent, PlanRow, TaskRow } from './types.js';

const PROJECT_FILE = '.hearth/PROJECT.md';
const NOTEBOOK_FILE = '.hearth/notebook.md';

export interface ProjectRecorder {
  /** Takes every event of the run; acts on the milestones. */
  on(event: PipelineEvent): void;
  /** Waits for what was written so far. */
  flush(): Promise<void>;
}

export function projectRecorder(
  plans: PlanStore,
  workspace: string,
  onProblem: (message: string) => void,
  now: () => Date = () => new Date(),
): ProjectRecorder {
  let chain = Promise.resolve();
  const later = (work: () => Promise<void>) => {
    chain = chain
      .then(work)
      .catch((err: Error) => onProblem(`the project state could not be written: ${err.message}`));
  };
  return {
    on(event) {
      const line = notebookLine(event);
      const state = STATE_EVENTS.has(event.type);
      if (!line && !state) return;
      later(async () => {
        if (line)
          await appendSafely(workspace, NOTEBOOK_FILE, `- ${now().toISOString()} ${await line(plans)}\n`);
        if (state) await writeSafely(workspace, PROJECT_FILE, await projectState(plans, workspace, now()));
      });
    },
    flush: () => chain,
  };
}

const STATE_EVENTS = new Set<PipelineEvent['type']>(['plan_planned', 'plan_failed', 'task_state', 'commit']);

/** Where the workspace's plans stand, as PROJECT.md says it. */
async function projectState(plans: PlanStore, workspace: string, at: Date): Promise<string> {
  const all = await plans.plans(workspace);
  const tasks = new Map<number, TaskRow[]>();
  for (const plan of all) tasks.set(plan.id, await plans.tasks(plan.id));
  const lines = [
    '# Project state',
    '',
    `Phase: ${phase(all, [...tasks.values()].flat())}`,
    `Updated: ${at.toISOString()} by hearth pipeline (the lab notebook: ${path.basename(NOTEBOOK_FILE)})`,
  ];
  for (const plan of all) {
    lines.push('', `## Plan #${plan.id}: ${plan.title} (${plan.state})`);
    if (plan.error) lines.push(`Error: ${plan.error}`);
    for (const t of tasks.get(plan.id) ?? []) {
      const mark = t.state === 'done' || t.state === 'done_with_debt' ? 'x' : ' ';
      const commit = t.commitHash ? `, ${t.commitHash.slice(0, 10)}` : '';
      lines.push(`- [${mark}] #${t.seq} ${t.title}: ${t.state.replace(/_/g, ' ')}${commit}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** wyrmspire's states: planning, executing, reviewing, complete. */
function phase(all: PlanRow[], tasks: TaskRow[]): string {
  if (all.some((p) => p.state === 'new')) return 'planning';
  if (tasks.some((t) => ['pending', 'coding', 'coded'].includes(t.state))) return 'executing';
  if (tasks.some((t) => ['verifying', 'reviewing', 'approved', 'committing'].includes(t.state)))
    return 'reviewing';
  return 'complete';
}

type Line = (plans: PlanStore) => Promise<string>;

/** The notebook's line for a milestone: what was tried and what came of it. */
function notebookLine(e: PipelineEvent): Line | undefined {
  const task = async (plans: PlanStore, id: number) => {
    const t = await plans.task(id);
    return `plan #${t.planId} task #${t.seq} ${t.title}`;
  };
  const short = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, 300);
  switch (e.type) {
    case 'plan_planned':
      return async () => `plan #${e.planId}: planned into ${e.tasks} task(s)`;
    case 'plan_failed':
      return async () => `plan #${e.planId}: planning failed: ${short(e.error)}`;
    case 'plan_analysed':
      return async () =>
        e.file
          ? `plan #${e.planId}: the analyst's findings in ${e.file}`
          : `plan #${e.planId}: no analysis: ${short(e.error ?? '')}`;
    case 'task_verified':
      if (e.findings.length === 0) return undefined;
      return async (plans) =>
        `${await task(plans, e.taskId)}: checks failed: ${short(e.findings.join('; '))}`;
    case 'task_quality':
      if (e.findings.length === 0) return undefined;
      return async (plans) =>
        `${await task(plans, e.taskId)}: quality gate ${e.blocked ? 'sent it back' : 'warns'}: ${short(e.findings.map((f) => f.message).join('; '))}`;
    case 'task_reviewed':
      return async (plans) =>
        `${await task(plans, e.taskId)}: review ${e.verdict}${e.summary ? `: ${short(e.summary)}` : ''}`;
    case 'task_state':
      if (!['done', 'done_with_debt', 'failed'].includes(e.state)) return undefined;
      return async (plans) =>
        `${await task(plans, e.taskId)}: ${e.state.replace(/_/g, ' ')}${e.note ? `: ${short(e.note)}` : ''}`;
    case 'commit':
      return async (plans) => `${await task(plans, e.taskId)}: committed ${e.hash.slice(0, 10)}`;
    default:
      return undefined;
  }
}

/** The file's folder made, and the file itself refused when it is a symlink (never followed). */
async function target(workspace: string, file: string): Promise<string> {
  const abs = path.join(workspace, file);
  await mkdir(path.dirname(abs), { recursive: true });
  const dir = await lstat(path.dirname(abs));
  const info = await lstat(abs).catch(() => undefined);
  if (!dir.isDirectory() || info?.isSymbolicLink()) throw new Error(`${file} is a link; not written`);
  return abs;
}

async function appendSafely(workspace: string, file: string, text: string): Promise<void> {
  const abs = await target(workspace, file);
  // O_NOFOLLOW: a link put in its place after the check is still not followed.
  const { O_APPEND, O_CREAT, O_WRONLY, O_NOFOLLOW } = constants;
  const handle = await open(abs, O_APPEND | O_CREAT | O_WRONLY | O_NOFOLLOW, 0o644);
  try {
    await handle.appendFile(text);
  } finally {
    await handle.close();
  }
}

export async function writeSafely(workspace: string, file: string, text: string): Promise<void> {
  const abs = await target(workspace, file);
  const temp = `${abs}.${process.pid}.tmp`;
  const handle = await open(temp, 'w', 0o644);
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
  // A rename replaces a link in its place rather than writing through it.
  await rename(temp, abs);
}
