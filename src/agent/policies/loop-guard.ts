import { LoopGuard } from '../loop-guard.js';
import type { Policy } from './policy.js';

/** Corrects, then stops, a run going round in circles (src/agent/loop-guard.ts tells). */
export function loopGuard(): Policy {
  const guard = new LoopGuard();
  return {
    async *afterCalls(reply, calls, run) {
      const verdict = guard.observe(
        reply.toolCalls,
        reply.toolCalls.map((call) => calls.errors.get(call.id)),
      );
      if (verdict.action === 'stop') return run.done('loop', verdict.message);
      if (verdict.action === 'warn') {
        yield { type: 'warning', message: verdict.message };
        run.append({ role: 'user', content: verdict.message });
      }
      return undefined;
    },
  };
}
