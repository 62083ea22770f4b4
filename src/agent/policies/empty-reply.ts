import type { Policy } from './policy.js';

const NUDGE = 'Your last reply was empty. Continue the task: call a tool, or give your final answer as text.';

/** A reply with neither text nor calls gets one push on (again after each reply that calls a tool). */
export function emptyReplyNudge(): Policy {
  let nudged = false;
  return {
    afterReply(reply) {
      if (reply.toolCalls.length > 0) nudged = false;
      return undefined;
    },
    async *beforeEnd(ending, run) {
      if (ending.by !== 'answer' || ending.text.trim() !== '' || nudged) return undefined;
      nudged = true;
      yield { type: 'warning', message: 'The model sent an empty reply; asking it to continue.' };
      run.append({ role: 'user', content: NUDGE });
      return 'again';
    },
  };
}
