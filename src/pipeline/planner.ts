import { z } from 'zod';
import { askJson, type RoleClient } from './llm-call.js';
import { type PlannedTask, type PlanRow, plannedTaskSchema, planReplySchema } from './types.js';

const PLANNER_PROMPT = `You split a plan into small coding tasks, each one a single commit a junior developer could do in one sitting.
Reply with JSON only: {"tasks": [{"title": str, "description": str, "files": [paths relative to the project root], "depends_on": [numbers of earlier tasks, 1-based], "acceptance": [checkable criteria]}]}.
Keep the plan's order; a task may depend only on tasks before it.`;

/** The planner's reply: `{tasks: [...]}`, or a bare array of tasks as many models write it. */
const plannerReply = z.union([
  planReplySchema,
  z
    .array(plannedTaskSchema)
    .min(1)
    .transform((tasks) => ({ tasks })),
]);

export type PlanResult =
  | { ok: true; tasks: PlannedTask[]; tokens: number }
  | { ok: false; error: string; tokens: number };

/** One part of a plan too big to plan at once, and the tasks its earlier parts became. */
export interface PlanPart {
  text: string;
  index: number;
  of: number;
  earlier: PlannedTask[];
}

/**
 * Decomposes a plan (or one part of it) into tasks; the dependencies are checked as well as the
 * shape. A part's tasks are numbered after the earlier parts' and may depend on any of them.
 */
export async function planTasks(
  role: RoleClient,
  plan: PlanRow,
  signal?: AbortSignal,
  part?: PlanPart,
): Promise<PlanResult> {
  const offset = part?.earlier.length ?? 0;
  const answer = await askJson(role, {
    name: 'plan',
    schema: plannerReply.superRefine((reply, ctx) => {
      reply.tasks.forEach((task, i) => {
        for (const dep of task.depends_on) {
          if (dep > offset + i) {
            ctx.addIssue({
              code: 'custom',
              path: ['tasks', i, 'depends_on'],
              message: `task ${offset + i + 1} depends on task ${dep}, which is not before it`,
            });
          }
        }
      });
    }),
    asked: planReplySchema,
    messages: [
      { role: 'system', content: PLANNER_PROMPT },
      { role: 'user', content: part && part.of > 1 ? partMessage(plan, part) : plan.markdown },
    ],
    signal,
  });
  if (!answer.ok) return answer;
  return { ok: true, tasks: answer.value.tasks, tokens: answer.tokens };
}

function partMessage(plan: PlanRow, part: PlanPart): string {
  const n = part.earlier.length;
  const earlier = n
    ? `Tasks 1-${n} come from the earlier parts:\n${part.earlier.map((t, i) => `${i + 1}. ${t.title}`).join('\n')}\nNumber your tasks from ${n + 1}; depends_on may name any earlier task.`
    : '';
  return [`Part ${part.index + 1} of ${part.of} of the plan "${plan.title}".`, earlier, part.text]
    .filter(Boolean)
    .join('\n\n');
}
