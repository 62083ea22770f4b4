import type { HookOutcome } from '../hooks/hooks.js';
import { compactHistory } from './compaction.js';
import type { AgentEvent } from './events.js';
import type { RunState } from './run-state.js';

/** A compaction in a run: done, nothing could be made smaller, or a PreCompact hook stops the run (why). */
export type CompactOutcome = 'compacted' | 'none' | { stop: string };

/**
 * Compacts the history in place (a PreCompact hook runs first), and tells the session, which
 * records the new history.
 */
export async function* compactRun(run: RunState): AsyncGenerator<AgentEvent, CompactOutcome> {
  const { options } = run;
  const announced = await options.hooks?.preCompact('auto', run.signal);
  if (announced?.stop) {
    for (const message of announced.notes) yield { type: 'warning', message };
    return { stop: `A PreCompact hook stopped the run: ${announced.stop}` };
  }
  if (announced) yield* hookNotes(announced);
  const before = run.contextNow();
  const overhead = run.overhead();
  const result = await compactHistory(run.messages, {
    llm: options.llm,
    state: run.ctx.durable,
    contextWindow: run.window,
    overhead,
    signal: run.signal,
  });
  if (result.method === 'none') {
    yield {
      type: 'warning',
      message: 'The conversation is near the context window, and nothing in it can be made smaller.',
    };
    return 'none';
  }
  run.messages.splice(0, run.messages.length, ...result.history);
  // What the server adds stays: counted on, so that the next trigger measures as this one did.
  const after = overhead + result.after;
  run.measured = { tokens: after, length: run.messages.length };
  options.onCompact?.(result.history);
  yield { type: 'compaction', before, after: Math.min(before, after), method: result.method };
  return 'compacted';
}

/** What hooks said for the user, as warnings. */
export function* hookNotes(outcome: HookOutcome): Generator<AgentEvent> {
  for (const message of outcome.notes) yield { type: 'warning', message };
  if (outcome.stop) yield { type: 'warning', message: `A hook stopped the run: ${outcome.stop}` };
}
