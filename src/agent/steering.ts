import { rememberRequest } from './compaction.js';
import type { AgentEvent } from './events.js';
import type { RunState } from './run-state.js';

/**
 * Messages a person sends while a run is going. The loop takes them at the next safe point: after
 * the tool call in progress (calls of the same turn not yet started are skipped) and before the
 * next request, or instead of ending when the model has just answered.
 */
export interface SteeringQueue {
  /** True when a message waits. */
  waiting(): boolean;
  /** Removes and returns the waiting messages, oldest first. */
  take(): string[];
}

/** Adds the messages the user sent meanwhile to the history. */
export function* takeSteering(run: RunState): Generator<AgentEvent> {
  for (const text of run.options.steering?.take() ?? []) {
    run.append({ role: 'user', content: text });
    rememberRequest(run.ctx.durable, text);
    yield { type: 'steer', text };
  }
}
