/**
 * LAO's `kpi`: how the pipeline does over time, per day (UTC) from the plans' logs of a workspace:
 * throughput (tasks finished), failures, the rework rate (finished tasks that needed more than one
 * coder round) and the first-pass verify rate (tasks whose first round passed the mechanical checks).
 * Computed from the database alone, like `report.ts`.
 */
import type { PlanStore } from './plan-store.js';

export interface KpiDay {
  /** YYYY-MM-DD, UTC. */
  day: string;
  finished: number;
  failed: number;
  /** Of the tasks finished that day, those sent back at least once (verifier, quality gate or reviewer). */
  reworked: number;
  /** Tasks whose first verification fell on that day, and those that passed it. */
  verified: number;
  firstPassVerified: number;
  tokens: number;
}

export interface Kpi {
  days: KpiDay[];
  total: Omit<KpiDay, 'day'>;
}

export async function kpiOf(plans: PlanStore, workspace: string): Promise<Kpi> {
  const days = new Map<string, KpiDay>();
  const dayOf = (at: number) => {
    const day = new Date(at).toISOString().slice(0, 10);
    let row = days.get(day);
    if (!row) {
      row = { day, finished: 0, failed: 0, reworked: 0, verified: 0, firstPassVerified: 0, tokens: 0 };
      days.set(day, row);
    }
    return row;
  };
  for (const plan of await plans.plans(workspace)) {
    const rework = new Map((await plans.tasks(plan.id)).map((t) => [t.id, t.rework]));
    const firstVerify = new Set<number>();
    for (const entry of await plans.logOf(plan.id)) {
      const body = entry.body as Record<string, unknown>;
      if (entry.kind === 'tokens' && typeof body.tokens === 'number') dayOf(entry.at).tokens += body.tokens;
      if (entry.taskId === null) continue;
      if (entry.kind === 'state' && (body.state === 'done' || body.state === 'done_with_debt')) {
        const row = dayOf(entry.at);
        row.finished++;
        if ((rework.get(entry.taskId) ?? 0) > 0) row.reworked++;
      }
      if (entry.kind === 'state' && body.state === 'failed') dayOf(entry.at).failed++;
      if (entry.kind === 'verify' && !firstVerify.has(entry.taskId)) {
        firstVerify.add(entry.taskId);
        const row = dayOf(entry.at);
        row.verified++;
        if (Array.isArray(body.findings) && body.findings.length === 0) row.firstPassVerified++;
      }
    }
  }
  const sorted = [...days.values()].sort((a, b) => (a.day < b.day ? -1 : 1));
  const total = { finished: 0, failed: 0, reworked: 0, verified: 0, firstPassVerified: 0, tokens: 0 };
  for (const d of sorted)
    for (const key of Object.keys(total) as Array<keyof typeof total>) total[key] += d[key];
  return { days: sorted, total };
}

const percent = (part: number, whole: number) => (whole === 0 ? '-' : `${Math.round((100 * part) / whole)}%`);

export function describeKpi(kpi: Kpi): string {
  if (kpi.days.length === 0) return 'No pipeline work recorded in this workspace yet.';
  const head = 'day          finished  failed  rework rate  first-pass verify  tokens';
  const line = (day: string, d: Omit<KpiDay, 'day'>) =>
    `${day.padEnd(12)} ${String(d.finished).padStart(8)}  ${String(d.failed).padStart(6)}  ${percent(d.reworked, d.finished).padStart(11)}  ${percent(d.firstPassVerified, d.verified).padStart(17)}  ${String(d.tokens).padStart(6)}`;
  return [head, ...kpi.days.map((d) => line(d.day, d)), line('total', kpi.total)].join('\n');
}
