import type { Policy } from './policy.js';

/** The user said something while the model answered: the run answers that before it ends. */
export function steeringFirst(): Policy {
  return {
    beforeEnd(ending, run) {
      return ending.by === 'answer' && run.options.steering?.waiting() ? 'again' : undefined;
    },
  };
}
