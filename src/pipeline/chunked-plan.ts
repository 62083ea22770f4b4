/**
 * Planning a plan too big for the planner's window: the Markdown is cut into parts at headings
 * (then paragraphs, then lines) that fit `maxChars`, each part is planned knowing the tasks of the
 * parts before it, and each finished part is logged at once. A run killed half-way resumes from the
 * last finished part with the same cut, which is logged before the first part is asked for.
 */
import type { RoleClient } from './llm-call.js';
import type { PlanStore } from './plan-store.js';
import { type PlanResult, planTasks } from './planner.js';
import type { PlannedTask, PlanRow } from './types.js';

/**
 * The plan characters one request may carry in a window of `contextWindow` tokens: about a third
 * of it (at four characters a token), leaving room for the prompt, the earlier tasks and the reply.
 */
export function partCharsFor(contextWindow: number): number {
  return Math.max(2000, Math.floor((contextWindow * 4) / 3));
}

export async function planInParts(
  role: RoleClient,
  plans: PlanStore,
  plan: PlanRow,
  maxChars: number,
  signal?: AbortSignal,
  /** Told after each part of a plan in several parts (1-based). */
  onPart?: (part: number, parts: number) => void,
): Promise<PlanResult & { parts: number }> {
  const planLog = { id: null, planId: plan.id };
  const cut = (await plans.logOf(plan.id, 'plan_parts'))[0]?.body as { parts: string[] } | undefined;
  const parts = cut?.parts ?? splitPlan(plan.markdown, maxChars);
  if (!cut && parts.length > 1) await plans.log(planLog, 'plan_parts', { parts });
  const done = (await plans.logOf(plan.id, 'plan_part')).map(
    (e) => e.body as { index: number; tasks: PlannedTask[] },
  );
  const tasks = done.flatMap((d) => d.tasks);
  let tokens = 0;
  for (let index = done.length; index < parts.length; index++) {
    const result = await planTasks(role, plan, signal, {
      text: parts[index]!,
      index,
      of: parts.length,
      earlier: tasks,
    });
    tokens += result.tokens;
    if (!result.ok) {
      const where = parts.length > 1 ? ` (part ${index + 1} of ${parts.length})` : '';
      return { ...result, error: `${result.error}${where}`, tokens, parts: parts.length };
    }
    if (parts.length > 1) {
      await plans.log(planLog, 'plan_part', { index, tasks: result.tasks });
      onPart?.(index + 1, parts.length);
    }
    tasks.push(...result.tasks);
  }
  return { ok: true, tasks, tokens, parts: parts.length };
}

/** Cuts Markdown into parts of at most `maxChars`, at the largest boundary that makes them fit. */
export function splitPlan(markdown: string, maxChars: number): string[] {
  const text = markdown.trim();
  if (text.length <= maxChars) return [text];
  const parts: string[] = [];
  for (const piece of pieces(text, maxChars, [/\n(?=#{1,6}\s)/, /\n\s*\n/, /\n/])) {
    const last = parts.at(-1);
    if (last !== undefined && last.length + piece.length + 2 <= maxChars)
      parts[parts.length - 1] = `${last}\n\n${piece}`;
    else parts.push(piece);
  }
  return parts;
}

/** Pieces no longer than `maxChars`, cut at the first boundary that gets there (hard cuts last). */
function pieces(text: string, maxChars: number, boundaries: RegExp[]): string[] {
  if (text.length <= maxChars) return [text];
  const [boundary, ...finer] = boundaries;
  if (!boundary) {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += maxChars) out.push(text.slice(i, i + maxChars));
    return out;
  }
  return text
    .split(boundary)
    .map((p) => p.trim())
    .filter(Boolean)
    .flatMap((p) => pieces(p, maxChars, finer));
}
