import { hookNotes } from '../compaction-step.js';
import type { Policy } from './policy.js';

/**
 * Stop hooks (SubagentStop in a sub-agent) may send the model on instead of ending, with their
 * reason as its next instruction; `continue: false` wins over a block, and the run ends. Last in
 * the list: the other policies have let the run end when the hooks are asked.
 */
export function stopHooks(): Policy {
  let active = false;
  return {
    async *beforeEnd(ending, run) {
      const stopping = await run.options.hooks?.stop(active, ending.text, run.signal);
      if (stopping) yield* hookNotes(stopping);
      if (stopping?.block && !stopping.stop) {
        active = true;
        run.append({ role: 'user', content: stopping.block });
        return 'again';
      }
      return undefined;
    },
  };
}
