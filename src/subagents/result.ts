import type { SubagentContract, SubagentResult, SubagentTask } from './types.js';

/** Where `report_result` keeps the child's contract: in the child's own session state. */
export const REPORT_KEY = 'subagent.report';

/** A result is read by a small model with a small window: each part is kept short. */
const MAX_SUMMARY_CHARS = 1500;
const MAX_NOTES_CHARS = 500;
const MAX_DELIVERABLES = 20;

/** A task that failed before or without a child's run: it never started, or could not. */
export function failedResult(task: SubagentTask, summary: string): SubagentResult {
  return {
    ...(task.taskId !== undefined ? { taskId: task.taskId } : {}),
    status: 'failed',
    summary,
    deliverables: [],
    usage: { prompt: 0, completion: 0 },
  };
}

/** The stored contract, if the child reported one that still reads as one. */
export function readContract(value: unknown): SubagentContract | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const c = value as Partial<SubagentContract>;
  if (c.status !== 'done' && c.status !== 'failed' && c.status !== 'partial') return undefined;
  if (typeof c.summary !== 'string') return undefined;
  return {
    status: c.status,
    summary: c.summary,
    deliverables: Array.isArray(c.deliverables) ? c.deliverables.map(String) : [],
    ...(typeof c.notes === 'string' && c.notes ? { notes: c.notes } : {}),
  };
}

/** One result as compact JSON for the parent model: only what it can act on. */
export function resultForModel(result: SubagentResult): string {
  return JSON.stringify({
    ...(result.taskId !== undefined ? { task_id: result.taskId } : {}),
    status: result.status,
    summary: clip(result.summary, MAX_SUMMARY_CHARS),
    ...(result.deliverables.length > 0
      ? { deliverables: result.deliverables.slice(0, MAX_DELIVERABLES) }
      : {}),
    ...(result.notes ? { notes: clip(result.notes, MAX_NOTES_CHARS) } : {}),
    ...(result.session ? { session: result.session } : {}),
    ...(result.worktree
      ? {
          branch: result.worktree.branch,
          worktree: result.worktree.path,
          diff_stat: clip(result.worktree.stat, MAX_NOTES_CHARS),
        }
      : {}),
  });
}

/** The results for a person: one line each, with where to read the child's whole session. */
export function describeResults(results: readonly SubagentResult[]): string {
  return results
    .map((r) => {
      const head = `${r.taskId ? `${r.taskId}: ` : ''}${r.status}`;
      const where = r.session ? ` (hearth sessions show ${r.session})` : '';
      const files = r.deliverables.length > 0 ? `\n  deliverables: ${r.deliverables.join(', ')}` : '';
      const branch = r.worktree
        ? `\n  branch: ${r.worktree.branch} (${r.worktree.commits} commits, in ${r.worktree.path})`
        : '';
      return `${head}: ${firstLine(r.summary)}${where}${files}${branch}`;
    })
    .join('\n');
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [cut; the whole is in its session]`;
}

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
