/**
 * What a plan's log says, read back: the quality report (`hearth pipeline report`, the status
 * line) and the review log committed with each task. Both are computed from the database alone, so
 * they come out the same however often a killed run wrote them.
 */
import { HELD } from '../store/pipeline/plan-rows.js';
import type { LogEntry, PlanStore } from './plan-store.js';
import type { Finding, PlanRow, TaskRow, TaskState, Verdict } from './types.js';
import { UNATTENDED_FIX } from './unattended.js';

export type Role = 'planner' | 'coder' | 'reviewer';

export interface PlanReport {
  planId: number;
  title: string;
  state: PlanRow['state'];
  tasks: number;
  byState: Partial<Record<TaskState, number>>;
  /** Coder rounds started, rework and runs redone after an interruption included. */
  attempts: number;
  reviews: number;
  /** Rounds the mechanical checks sent back without a review. */
  verifierRejections: number;
  /** Reviewer findings by severity, over every review. */
  findings: Record<Finding['severity'], number>;
  /** Tasks finished with debt, and the findings they carry. */
  debt: Array<{ seq: number; title: string; findings: Finding[] }>;
  /** The quality gate: rounds it sent back, and each task's latest findings (`quality-gate.ts`). */
  quality: {
    blocked: number;
    tasks: Array<{ seq: number; title: string; mode: string; blocked: boolean; findings: Finding[] }>;
  };
  /** Tasks whose coder had calls declined for want of an answer (unattended.ts), and those calls. */
  declined: Array<{ seq: number; title: string; calls: string[] }>;
  tokens: Record<Role, number> & { total: number };
  /** Role models put in memory and taken out (LM Studio), and the time those swaps took. */
  models: { loads: number; unloads: number; swapMs: number };
  /** From the plan's first logged step to its last. */
  wallMs: number;
  /** The task being worked on now, its role and model, if a worker holds one. */
  current?: { seq: number; role: string; model?: string };
}

/** The report of a stored plan, read from the store. */
export async function reportOf(plans: PlanStore, plan: PlanRow): Promise<PlanReport> {
  return planReport(plan, await plans.tasks(plan.id), await plans.logOf(plan.id));
}

/** The report of `plan` from its tasks and its whole log. */
export function planReport(plan: PlanRow, tasks: TaskRow[], log: LogEntry[]): PlanReport {
  const byState: PlanReport['byState'] = {};
  for (const t of tasks) byState[t.state] = (byState[t.state] ?? 0) + 1;
  const findings = { critical: 0, major: 0, minor: 0 };
  const tokens = { planner: 0, coder: 0, reviewer: 0, total: 0 };
  let attempts = 0;
  let reviews = 0;
  let verifierRejections = 0;
  const models = { loads: 0, unloads: 0, swapMs: 0 };
  const declined = new Map<number, Set<string>>();
  const gate = new Map<number, { mode: string; blocked: boolean; findings: Finding[] }>();
  let blocked = 0;
  for (const entry of log) {
    if (entry.kind === 'quality' && entry.taskId !== null) {
      const q = entry.body as { mode: string; blocked: boolean; findings: Finding[] };
      gate.set(entry.taskId, q);
      if (q.blocked) blocked++;
    }
    const body = entry.body as Record<string, unknown>;
    if (entry.kind === 'declined' && entry.taskId !== null) {
      const calls = declined.get(entry.taskId) ?? new Set<string>();
      for (const call of body.calls as string[]) calls.add(call);
      declined.set(entry.taskId, calls);
    }
    if (entry.kind === 'state' && body.state === 'coding') attempts++;
    if (entry.kind === 'verify' && Array.isArray(body.findings) && body.findings.length > 0)
      verifierRejections++;
    if (entry.kind === 'review') {
      reviews++;
      for (const f of (body as Verdict).findings) findings[f.severity]++;
    }
    if (entry.kind === 'model_swap') {
      const swap = body as { loaded?: string; unloaded?: string[]; ms?: number };
      if (swap.loaded) models.loads++;
      models.unloads += swap.unloaded?.length ?? 0;
      models.swapMs += Number(swap.ms) || 0;
    }
    if (entry.kind === 'tokens') {
      const n = Number(body.tokens) || 0;
      tokens[body.role as Role] += n;
      tokens.total += n;
    }
  }
  const held = tasks.find((t) => HELD.includes(t.state));
  const role = held && [...log].reverse().find((e) => e.kind === 'role' && e.taskId === held.id);
  const roleBody = role?.body as { role: string; model?: string } | undefined;
  return {
    planId: plan.id,
    title: plan.title,
    state: plan.state,
    tasks: tasks.length,
    byState,
    attempts,
    reviews,
    verifierRejections,
    findings,
    quality: {
      blocked,
      tasks: tasks
        .filter((t) => gate.get(t.id)?.findings.length)
        .map((t) => ({ seq: t.seq, title: t.title, ...gate.get(t.id)! })),
    },
    debt: tasks
      .filter((t) => t.state === 'done_with_debt')
      .map((t) => ({ seq: t.seq, title: t.title, findings: t.findings })),
    declined: tasks
      .filter((t) => declined.has(t.id))
      .map((t) => ({ seq: t.seq, title: t.title, calls: [...declined.get(t.id)!] })),
    tokens,
    models,
    wallMs: log.length > 1 ? log.at(-1)!.at - log[0]!.at : 0,
    ...(held && roleBody
      ? {
          current: {
            seq: held.seq,
            role: roleBody.role,
            ...(roleBody.model ? { model: roleBody.model } : {}),
          },
        }
      : {}),
  };
}

/** The report in a few lines, as `hearth pipeline report` prints it. */
export function describeReport(r: PlanReport): string {
  const states = Object.entries(r.byState)
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');
  const lines = [
    `#${r.planId} ${r.title} [${r.state}]: ${r.tasks} tasks${states ? ` (${states})` : ''}`,
    `  attempts ${r.attempts}, reviews ${r.reviews}, sent back by the checks ${r.verifierRejections}`,
    `  findings: ${r.findings.critical} critical, ${r.findings.major} major, ${r.findings.minor} minor`,
    `  tokens: ${r.tokens.total} (planner ${r.tokens.planner}, coder ${r.tokens.coder}, reviewer ${r.tokens.reviewer})`,
    `  wall time: ${formatDuration(r.wallMs)}`,
  ];
  if (r.models.loads + r.models.unloads > 0) lines.push(`  models: ${describeSwaps(r.models)}`);
  if (r.current)
    lines.push(
      `  now: task #${r.current.seq}, ${r.current.role}${r.current.model ? ` (${r.current.model})` : ''}`,
    );
  for (const d of r.declined) lines.push(`  declined in task #${d.seq} ${d.title}: ${d.calls.join(', ')}`);
  if (r.declined.length > 0)
    lines.push(`  (nobody can approve calls during a pipeline run; to let them run: ${UNATTENDED_FIX})`);
  if (r.quality.blocked > 0) lines.push(`  quality gate: sent back ${r.quality.blocked} round(s)`);
  for (const q of r.quality.tasks) {
    lines.push(`  quality gate on task #${q.seq} ${q.title} (${q.blocked ? 'blocked' : q.mode}):`);
    for (const f of q.findings) lines.push(`    - [${f.severity}] ${f.message}`);
  }
  for (const d of r.debt) {
    lines.push(`  debt in task #${d.seq} ${d.title}:`);
    for (const f of d.findings) lines.push(`    - [${f.severity}] ${f.message}`);
  }
  return lines.join('\n');
}

/** Loads, unloads and the time they took, in a few words. */
export function describeSwaps(m: PlanReport['models']): string {
  return `${m.loads} loads, ${m.unloads} unloads, ${formatDuration(m.swapMs)} swapping`;
}

function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m ${s % 60}s` : `${Math.floor(m / 60)}h ${m % 60}m`;
}

/** The review log in Markdown: every check that sent work back and every review, in order. */
export async function reviewLog(plans: PlanStore, plan: PlanRow): Promise<string> {
  const tasks = new Map<number, TaskRow>((await plans.tasks(plan.id)).map((t) => [t.id, t]));
  const rounds = new Map<number, number>();
  const out = [`# Review log: plan #${plan.id} ${plan.title}`, ''];
  for (const entry of await plans.logOf(plan.id)) {
    const task = entry.taskId === null ? undefined : tasks.get(entry.taskId);
    if (!task) continue;
    const written = logSection(entry, task, rounds);
    if (written) out.push(written, '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

function logSection(entry: LogEntry, task: TaskRow, rounds: Map<number, number>): string | undefined {
  if (entry.kind === 'quality') {
    const q = entry.body as { blocked: boolean; findings: Finding[] };
    if (q.findings.length === 0) return undefined;
    const said = q.blocked ? 'quality gate blocked it' : 'quality gate warns';
    return [
      `## Task #${task.seq} ${task.title}: ${said}`,
      ...q.findings.map((f) => `- [${f.severity}] ${f.message}`),
    ].join('\n');
  }
  if (entry.kind === 'verify') {
    const findings = (entry.body as { findings: string[] }).findings;
    if (findings.length === 0) return undefined;
    return [`## Task #${task.seq} ${task.title}: checks failed`, ...findings.map((f) => `- ${f}`)].join('\n');
  }
  if (entry.kind !== 'review') return undefined;
  const n = (rounds.get(task.id) ?? 0) + 1;
  rounds.set(task.id, n);
  const v = entry.body as Verdict;
  return [
    `## Task #${task.seq} ${task.title}: review ${n}, ${v.verdict}`,
    v.summary,
    ...v.findings.map((f) => `- [${f.severity}] ${f.file ? `${f.file}: ` : ''}${f.message}`),
  ]
    .filter(Boolean)
    .join('\n');
}

/**
 * The quality report file committed beside the review log (`quality-report.json`): the plan's
 * gate totals and each task's latest findings, as JSON written whole from the database. Undefined
 * while the gate has found nothing in the plan: no file is committed for a clean plan.
 */
export async function qualityReportFile(plans: PlanStore, plan: PlanRow): Promise<string | undefined> {
  const r = await reportOf(plans, plan);
  if (r.quality.tasks.length === 0 && r.quality.blocked === 0) return undefined;
  const file = {
    plan: r.planId,
    title: r.title,
    tasks: r.tasks,
    byState: r.byState,
    verifierRejections: r.verifierRejections,
    qualityBlocked: r.quality.blocked,
    reviewFindings: r.findings,
    quality: r.quality.tasks,
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}
