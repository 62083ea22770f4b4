import type { AssistantMessage, LlmError, ToolCall } from '../../llm/types.js';
import type { AgentEvent, DoneEvent, UsageEvent } from '../events.js';
import type { CallsOutcome } from '../run-calls.js';
import type { RunState } from '../run-state.js';

/**
 * What a policy decides at its point of the turn: end the run with this event, ask the model again
 * at once ('again': the rest of the turn is skipped), or nothing (the next policy, then the loop,
 * goes on).
 */
export type Verdict = DoneEvent | 'again' | undefined;

/**
 * A policy's work at one point: its verdict, or, when it has something to say (warnings, hook
 * output), a generator of those events that returns its verdict.
 */
export type PolicyStep = AsyncGenerator<AgentEvent, Verdict> | Verdict;

/** A reply as recorded: capped to the window, in the history, its usage reported. */
export interface Reply {
  message: AssistantMessage;
  toolCalls: ToolCall[];
  usage: UsageEvent;
}

/** The run would end: the model answered in text (`answer`), or a tool that ends the run succeeded (`tool`). */
export interface Ending {
  text: string;
  by: 'answer' | 'tool';
}

/**
 * A rule the loop applies after a request: token budget, nudges, the loop guard, Stop hooks, the
 * context-overflow retry. Each is made per run (its counters are its own) and says only at the
 * points it cares about; the loop asks them in list order (src/agent/policies/index.ts), the first
 * verdict wins. A new rule is a new file here and a line in that list: the loop stays as it is.
 */
export interface Policy {
  /** The request failed (not aborted): 'again' retries the turn; a done event ends the run with it. */
  requestFailed?(error: LlmError, run: RunState): PolicyStep;
  /** A reply was recorded, before its calls run (or the run ends, when it has none). */
  afterReply?(reply: Reply, run: RunState): PolicyStep;
  /** The run is about to end: 'again' sends the model on instead (append its next instruction first). */
  beforeEnd?(ending: Ending, run: RunState): PolicyStep;
  /** The reply's calls ran to the end of the turn (none paused, failed, stopped or ended the run). */
  afterCalls?(reply: Reply, calls: CallsOutcome, run: RunState): PolicyStep;
}

/** Asks each policy in turn at one point; the first verdict wins. */
export async function* consult(
  policies: readonly Policy[],
  step: (policy: Policy) => PolicyStep | undefined,
): AsyncGenerator<AgentEvent, Verdict> {
  for (const policy of policies) {
    const answer = step(policy);
    const verdict = typeof answer === 'object' && 'next' in answer ? yield* answer : answer;
    if (verdict !== undefined) return verdict;
  }
  return undefined;
}
