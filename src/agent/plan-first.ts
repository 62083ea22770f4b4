import { writeTodos } from '../tools/tracking/index.js';
import type { SessionState } from '../tools/types.js';

/**
 * Plan first (`--plan`, from the LMAgent seed): the agent explores read-only in plan mode and
 * presents a numbered plan; once the user approves it, the run goes on in the user's own mode with
 * the plan's steps as its todo list.
 */
export function planRequest(task: string): string {
  return `${task}\n\n[Plan first: look around with read-only tools as needed, then answer with a numbered, step-by-step plan. Change nothing yet: the user approves the plan before you carry it out.]`;
}

export const PLAN_APPROVED =
  'The plan is approved. Carry it out step by step, keeping the todo list (already filled with its steps) up to date.';

/** The steps of a plan written as a numbered or bulleted list: one per item, markup left out. */
function planSteps(text: string): string[] {
  const steps: string[] = [];
  for (const line of text.split('\n')) {
    const item = /^\s{0,3}(?:\d+[.)]|[-*+])\s+(.+)$/.exec(line);
    if (item) steps.push(item[1]!.replace(/\*\*|__|`/g, '').trim());
  }
  return steps.filter((step) => step !== '');
}

/** Makes the plan the session's todo list, the first step in progress. Returns the number of steps. */
export function adoptPlan(state: SessionState, planText: string): number {
  const steps = planSteps(planText);
  writeTodos(
    state,
    steps.map((text, i) => ({ text, status: i === 0 ? 'in_progress' : 'pending' })),
  );
  return steps.length;
}
