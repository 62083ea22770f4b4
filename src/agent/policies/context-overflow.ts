import { compactRun } from '../compaction-step.js';
import { learnWindow, stillTooLong } from '../context-budget.js';
import type { Policy } from './policy.js';

/**
 * The server says the prompt does not fit: budget with the window its error teaches from now on,
 * compact, and try the turn once more. Refused again, the run ends saying so.
 */
export function contextOverflowRetry(): Policy {
  let retried = false;
  return {
    async *requestFailed(error, run) {
      if (retried) return run.done('error', stillTooLong(run.window, error));
      const lesson = error.kind === 'context_overflow' ? learnWindow(run.window, error) : undefined;
      if (!lesson) return undefined;
      retried = true;
      if (lesson.window !== run.window) {
        run.window = lesson.window;
        run.options.onContextWindow?.(run.window);
      }
      yield { type: 'warning', message: lesson.message };
      const compacted = yield* compactRun(run);
      if (typeof compacted === 'object') return run.done('blocked', compacted.stop);
      if (compacted === 'none') {
        return run.done(
          'error',
          `The prompt does not fit the model's context window (about ${run.window} tokens), and it cannot be made smaller. Start a new session, or load the model with a larger context.`,
        );
      }
      return 'again';
    },
    afterReply() {
      retried = false;
      return undefined;
    },
  };
}
