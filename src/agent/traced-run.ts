import type { AgentEvent } from './events.js';
import type { SessionDeps } from './session-deps.js';

export type { SessionDeps } from './session-deps.js';

/**
 * `run`'s events as they come, each seen by the run's trace (with `deps.telemetry`), which ends
 * with the run or its error; without telemetry, `run` itself.
 */
export async function* traced(
  deps: Pick<SessionDeps, 'telemetry' | 'llm' | 'agentType'>,
  conversationId: string,
  run: AsyncGenerator<AgentEvent>,
): AsyncGenerator<AgentEvent> {
  const trace = deps.telemetry?.run({
    conversationId,
    model: deps.llm.model,
    agentName: deps.agentType ?? 'hearth',
  });
  if (!trace) return yield* run;
  let error: string | undefined;
  try {
    for await (const event of run) {
      trace.observe(event);
      yield event;
    }
  } catch (err) {
    error = (err as Error).message ?? String(err);
    throw err;
  } finally {
    trace.end(error);
  }
}
