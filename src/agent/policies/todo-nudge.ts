import { readTodos } from '../../tools/tracking/index.js';
import type { Policy } from './policy.js';

/**
 * The model answers with todo items still open: push it on, up to `limit` times in a row (deep
 * work); a reply that calls a tool starts the count again.
 */
export function todoNudges(limit: number): Policy {
  let nudges = 0;
  return {
    afterReply(reply) {
      if (reply.toolCalls.length > 0) nudges = 0;
      return undefined;
    },
    beforeEnd(ending, run) {
      if (ending.by !== 'answer' || nudges >= limit) return undefined;
      const open = readTodos(run.ctx.durable).filter((t) => t.status !== 'done');
      if (open.length === 0) return undefined;
      nudges++;
      run.append({
        role: 'user',
        content: `Your todo list still has ${open.length} open item(s), starting with "${open[0]!.text}". Continue with it, or mark items done if they are.`,
      });
      return 'again';
    },
  };
}
