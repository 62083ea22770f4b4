import type { ObservedRun, RunObserver } from '../scheduler/agent-runner.js';
import type { EventLog } from '../store/event-log.js';
import { EventRecorder } from './recorder.js';
import { wireRun } from './wire.js';

/**
 * Records a run this process does outside the gateway (`hearth worker`'s tasks) into the event
 * log, as the gateway records the runs it does: the task as the user's message, then each event
 * in the wire's form, numbered and stored by the same recorder. With the shared PostgreSQL log, a
 * `hearth serve` on any machine streams it live.
 */
export function recordRun(
  log: EventLog,
  prompt: string,
  options: { now?: () => number; onProblem?: (message: string) => void } = {},
): (run: ObservedRun) => RunObserver {
  return (run) => {
    const recorder = new EventRecorder(run.sessionId, log, options.now ?? Date.now, {
      onProblem: options.onProblem,
    });
    const wire = wireRun({
      model: run.model,
      mode: 'bounded',
      maxIterations: run.maxIterations,
      tokenBudget: run.tokenBudget,
      usage: { prompt: 0, completion: 0 },
    });
    recorder.record({ type: 'user_message', text: prompt });
    return { event: (event) => recorder.record(wire(event)), end: () => recorder.close() };
  };
}
