import { z } from 'zod';
import { defineTool, type SessionState, ToolError } from '../types.js';
import { boundedText, isRecord, numberish, optional, parseJsonString, pickText } from './lenient.js';

/**
 * An ordered plan, kept in session state under `plan`. `current` is 1-based; steps before it
 * are done, and `steps.length + 1` means every step is done.
 */
export interface Plan {
  steps: string[];
  current: number;
  note?: string;
}

const PLAN_KEY = 'plan';
const MAX_PLAN_STEPS = 30;
const MAX_STEP_CHARS = 300;
const MAX_NOTE_CHARS = 500;

/** Takes a JSON string, a newline-separated list, or items as objects; drops numbering we add ourselves. */
function normalizeSteps(value: unknown): unknown {
  let steps = parseJsonString(value);
  if (typeof steps === 'string') steps = steps.split('\n').filter((line) => line.trim() !== '');
  if (!Array.isArray(steps)) return steps;
  return steps.map((step) => {
    const text = isRecord(step) ? pickText(step, ['text', 'step', 'title', 'content', 'description']) : step;
    return typeof text === 'string' ? text.replace(/^\s*(?:[-*•]|\d+[.):]|step\s+\d+[.):]?)\s+/i, '') : text;
  });
}

const storedPlan = z.object({
  steps: z.array(z.string()).min(1),
  current: z.number().int().min(1),
  note: z.string().optional(),
});

/** The plan kept in session state, or undefined when there is none (or it does not parse). */
export function readPlan(state: SessionState): Plan | undefined {
  const parsed = storedPlan.safeParse(state.get(PLAN_KEY));
  if (!parsed.success) return undefined;
  const plan = parsed.data;
  return { ...plan, current: Math.min(plan.current, plan.steps.length + 1) };
}

/** A header, then `[x]` for done steps, `→` at the current one, `[ ]` for the rest, then the note. */
export function renderPlan(plan: Plan): string {
  const total = plan.steps.length;
  const finished = plan.current > total;
  const header = finished ? `Plan: all ${total} steps done` : `Plan: step ${plan.current} of ${total}`;
  const lines = plan.steps.map((step, i) => {
    const n = i + 1;
    const mark = n < plan.current ? '[x]' : n === plan.current ? '→' : '[ ]';
    return `${mark} ${n}. ${step}`;
  });
  if (plan.note) lines.push(`Note: ${plan.note}`);
  return [header, ...lines].join('\n');
}

export const planUpdateTool = defineTool({
  name: 'plan_update',
  description:
    'Set or revise your step-by-step plan and mark the step you are on. Steps before it count as done.',
  parameters: z.object({
    steps: optional(
      z
        .array(boundedText('a step', MAX_STEP_CHARS))
        .refine((steps) => steps.length > 0, 'steps must hold at least one step')
        .refine(
          (steps) => steps.length <= MAX_PLAN_STEPS,
          `at most ${MAX_PLAN_STEPS} steps; merge small ones`,
        ),
      normalizeSteps,
    ).describe('The whole plan, in order'),
    current: optional(
      z.number().refine(Number.isInteger, 'current must be a whole step number'),
      numberish,
    ).describe('Step now in progress, 1-based; one past the last marks all done'),
    note: optional(
      z
        .string()
        .refine((note) => note.length <= MAX_NOTE_CHARS, `note is longer than ${MAX_NOTE_CHARS} characters`),
    ).describe('Short status note; "" clears it'),
  }),
  mutates: false,
  async run(args, ctx) {
    const old = readPlan(ctx.durable);
    const steps = args.steps ?? old?.steps;
    if (!steps) {
      throw new ToolError('There is no plan yet. Pass steps (a list of short strings) to create one.');
    }
    const carried = args.steps === undefined || continues(old, args.steps);
    let current = carried && old ? old.current : 1;
    if (args.current !== undefined) {
      current = args.current;
      if (current < 1 || current > steps.length + 1) {
        const n = steps.length;
        throw new ToolError(
          `current=${current} is out of range: the plan has ${n} step${n === 1 ? '' : 's'}. Use 1-${n}, or ${n + 1} when all are done.`,
        );
      }
    }
    const noteText = args.note === undefined ? (carried ? old?.note : undefined) : args.note.trim();
    const plan: Plan = { steps, current, ...(noteText ? { note: noteText } : {}) };
    ctx.durable.set(PLAN_KEY, plan);
    const rendered = renderPlan(plan);
    return { output: rendered, display: rendered, meta: { plan } };
  },
});

/**
 * Whether new steps keep the finished part of the old plan (a revision of what is left), in which
 * case progress carries over; otherwise it is a new plan and starts at step 1.
 */
function continues(old: Plan | undefined, steps: readonly string[]): boolean {
  if (!old) return false;
  const done = old.steps.slice(0, old.current - 1);
  if (done.length > steps.length) return false;
  return done.every((step, i) => step.trim().toLowerCase() === steps[i]?.trim().toLowerCase());
}
