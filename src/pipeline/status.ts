/**
 * The pipeline of a workspace at a glance: `hearth pipeline status`, the REPL's `/pipeline`, the
 * `pipeline_status` tool and the gateway's `/api/pipeline` all read this one snapshot.
 */
import type { JournalEntry, PipelineJournal } from './journal.js';
import type { PlanStore } from './plan-store.js';
import { describeSwaps, type PlanReport, planReport } from './report.js';
import type { PipelineEvent, PlanRow, TaskRow } from './types.js';

export interface PipelineStatus {
  workspace: string;
  paused: boolean;
  plans: Array<{ plan: PlanRow; tasks: TaskRow[]; report: PlanReport }>;
  /** The latest events, oldest first. */
  recent: JournalEntry[];
}

export async function pipelineStatus(
  plans: PlanStore,
  journal: PipelineJournal,
  workspace: string,
  recent = 20,
): Promise<PipelineStatus> {
  const rows: PipelineStatus['plans'] = [];
  for (const plan of await plans.plans(workspace)) {
    const tasks = await plans.tasks(plan.id);
    rows.push({ plan, tasks, report: planReport(plan, tasks, await plans.logOf(plan.id)) });
  }
  return {
    workspace,
    paused: await journal.paused(workspace),
    plans: rows,
    recent: recent > 0 ? await journal.recent(workspace, recent) : [],
  };
}

/**
 * The status in lines: a line per plan (tasks by state, tokens, who works on what now), then a
 * line per task unless `tasks` is false. Stored text comes out as stored: callers printing to a
 * terminal sanitise it.
 */
export function describeStatus(status: PipelineStatus, options: { tasks?: boolean } = {}): string {
  if (status.plans.length === 0) return 'No plans in this workspace (add one: hearth plan add FILE.md).';
  const lines = status.paused
    ? ['Paused: running workers finish their step and take no new one (hearth pipeline resume).']
    : [];
  for (const { plan, tasks, report } of status.plans) {
    const byState = Object.entries(report.byState)
      .map(([s, n]) => `${n} ${s}`)
      .join(', ');
    const now = report.current
      ? `; now #${report.current.seq} ${report.current.role}${report.current.model ? ` (${report.current.model})` : ''}`
      : '';
    const { models } = report;
    const swaps = models.loads + models.unloads > 0 ? `; ${describeSwaps(models)}` : '';
    lines.push(
      `#${plan.id} ${plan.title} [${plan.state}] ${byState || plan.error || ''} — ${report.tokens.total} tokens${swaps}${now}`,
    );
    if (options.tasks === false) continue;
    for (const t of tasks) {
      const why = t.error ? ` — ${t.error}` : '';
      lines.push(`  ${String(t.seq).padStart(3)}. ${t.state.padEnd(14)} ${t.title}${why}`);
    }
  }
  return lines.join('\n');
}

/** One event as a short progress line (`hearth pipeline run`, `hearth pipeline events`). */
export function describeEvent(e: PipelineEvent): string {
  switch (e.type) {
    case 'plan_added': {
      const from = e.file ? ` from ${e.file}` : '';
      return e.created ? `plan #${e.planId} added${from}` : `plan #${e.planId} is stored already${from}`;
    }
    case 'plan_skipped':
      return `${e.file} skipped: ${e.reason}`;
    case 'idle':
      if (e.reason === 'paused') return 'paused; waiting for hearth pipeline resume (Ctrl-C to stop)';
      if (e.reason === 'standby')
        return 'another worker works this workspace; standing by to take over if it stops (Ctrl-C to stop)';
      if (e.reason === 'lease_lost')
        return 'lease lost (the database was out of reach); the step stopped and another worker has the task';
      return 'queue empty; waiting for new plans in plans/ (Ctrl-C to stop)';
    case 'took_over':
      return `took the workspace over from ${e.from}, which no longer runs on this machine`;
    case 'claim_lost':
      return `task #${e.seq}: no longer this worker's (its lease lapsed and another worker has it); stopped without recording ${e.refused === 'commit' ? 'a commit' : e.refused}`;
    case 'paused':
      return 'pipeline paused';
    case 'resumed':
      return 'pipeline resumed';
    case 'plan_part':
      return `plan #${e.planId}: part ${e.part} of ${e.parts} planned`;
    case 'plan_planned':
      return `plan #${e.planId}: ${e.tasks} tasks${e.parts > 1 ? ` (planned in ${e.parts} parts)` : ''}`;
    case 'plan_failed':
      return `plan #${e.planId} could not be planned: ${e.error}`;
    case 'plan_analysed':
      return e.file
        ? `plan #${e.planId}: the analyst's findings are in ${e.file}`
        : `plan #${e.planId}: no findings from the analyst (${e.error}); planned without`;
    case 'task_state':
      return `task #${e.seq}: ${e.state}${e.note ? ` (${e.note})` : ''}`;
    case 'task_role':
      return `task ${e.taskId}: ${e.role}${e.model ? ` (${e.model})` : ''}`;
    case 'task_verified':
      return e.findings.length === 0
        ? `task #${e.seq}: checks passed`
        : `task #${e.seq}: checks failed: ${e.findings.join('; ')}`;
    case 'task_quality': {
      if (e.findings.length === 0) return `task #${e.seq}: quality gate passed`;
      const said = e.blocked ? 'quality gate blocked it' : 'quality gate warns';
      return `task #${e.seq}: ${said}: ${e.findings.map((f) => f.message).join('; ')}`;
    }
    case 'task_reviewed': {
      const found = e.findings.length ? ` (${e.findings.length} finding(s))` : '';
      return `task #${e.seq}: review says ${e.verdict}${found}${e.summary ? `: ${e.summary}` : ''}`;
    }
    case 'tasks_retried':
      return `${e.count} failed task(s) back in the queue`;
    case 'plan_commit':
      return `plan #${e.planId}: plan and task list committed ${e.hash.slice(0, 10)}`;
    case 'plan_commit_failed':
      return `plan #${e.planId}: the plan could not be committed: ${e.error}`;
    case 'commit':
      return `task ${e.taskId}: committed ${e.hash.slice(0, 10)}`;
    case 'model_swap':
      return `models: ${[...e.unloaded.map((m) => `unloaded ${m}`), ...(e.loaded ? [`loaded ${e.loaded}`] : [])].join(', ')} (${(e.ms / 1000).toFixed(1)} s)`;
    case 'model_note':
      return `models: ${e.message}`;
    case 'permission_note':
      return e.message;
    case 'task_declined':
      return `task #${e.seq}: calls declined (nobody can approve them during a pipeline run): ${e.calls.join(', ')}`;
  }
}
