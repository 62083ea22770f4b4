import type { ChatMessage } from '../../llm/types.js';
import type { Policy } from './policy.js';

const WARNING_SHARE = 0.8;

/**
 * Stops the run once `budget` tokens (prompt + completion, summed over requests) are spent, and
 * at `warnAt` of it (`token_budget_warning`, default 80%) tells the user and the model to wrap up. The model's note goes after the reply when it
 * called nothing, else after the results of its calls: servers expect results straight after calls.
 */
export function tokenBudget(budget: number | undefined, warnAt = WARNING_SHARE): Policy {
  const share = `${Math.round(warnAt * 100)}%`;
  let spent = 0;
  let warned = false;
  let note: ChatMessage | undefined;
  return {
    async *afterReply(reply, run) {
      spent += reply.usage.prompt + reply.usage.completion;
      if (budget === undefined) return undefined;
      if (spent >= budget) return run.done('budget', `Stopped: the token budget (${budget}) is spent.`);
      if (!warned && spent >= budget * warnAt) {
        warned = true;
        yield { type: 'warning', message: `${share} of the token budget is spent (${spent} of ${budget}).` };
        note = {
          role: 'user',
          content: `Note: ${share} of your token budget is spent. Finish the most important part and wrap up.`,
        };
      }
      if (note && reply.toolCalls.length === 0) {
        run.append(note);
        note = undefined;
      }
      return undefined;
    },
    afterCalls(_reply, _calls, run) {
      if (note) {
        run.append(note);
        note = undefined;
      }
      return undefined;
    },
  };
}
