import type { RunAgentOptions } from '../loop.js';
import { contextOverflowRetry } from './context-overflow.js';
import { emptyReplyNudge } from './empty-reply.js';
import { loopGuard } from './loop-guard.js';
import type { Policy } from './policy.js';
import { steeringFirst } from './steering-first.js';
import { stopHooks } from './stop-hooks.js';
import { todoNudges } from './todo-nudge.js';
import { tokenBudget } from './token-budget.js';

export type { Policy } from './policy.js';

/**
 * The policies of one run, in the order they are asked at each point. The order matters where
 * two speak at one point: the budget stops before any nudge, a steering message beats the nudges,
 * and the Stop hooks come last, when nothing else sent the model on.
 */
export function runPolicies(
  options: Pick<RunAgentOptions, 'tokenBudget' | 'budgetWarning' | 'todoNudges'>,
): Policy[] {
  return [
    contextOverflowRetry(),
    tokenBudget(options.tokenBudget, options.budgetWarning),
    steeringFirst(),
    emptyReplyNudge(),
    todoNudges(options.todoNudges ?? 0),
    loopGuard(),
    stopHooks(),
  ];
}
