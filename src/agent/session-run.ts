import type { ToolCall } from '../llm/types.js';
import type { ApprovalAnswer } from '../permissions/gate.js';
import type { SessionState } from '../store/rows.js';
import type { AgentEvent } from './events.js';
import type { RunAgentOptions } from './loop.js';
import type { SessionDeps } from './session-deps.js';

/** What pieces of a session's run are made of, kept apart so session.ts stays readable. */

/** The session's state key naming the turn its checkpoints go to (`checkpointTurn`). */
const CHECKPOINT_TURN_KEY = 'checkpoint_turn';

/**
 * The turn a run's checkpoints belong to: a run with a task begins one at the seq its message
 * gets (`stored`); a run without (a resumed pause) goes on with the turn it left, kept in the state.
 */
export function checkpointTurn(
  state: SessionState,
  stored: number,
  task: string | undefined,
): { seq: number; label: string } {
  const kept = state.get(CHECKPOINT_TURN_KEY) as { seq: number; label: string } | undefined;
  if (task === undefined && kept) return kept;
  const turn = { seq: stored, label: (task ?? '').replace(/\s+/g, ' ').trim().slice(0, 120) };
  state.set(CHECKPOINT_TURN_KEY, turn);
  return turn;
}

/** What every run of a session takes from its deps as they are. */
export function runDeps(
  deps: SessionDeps,
): Pick<
  RunAgentOptions,
  | 'llm'
  | 'gate'
  | 'sandbox'
  | 'web'
  | 'editor'
  | 'vision'
  | 'approve'
  | 'workspace'
  | 'maxIterations'
  | 'tokenBudget'
  | 'budgetWarning'
  | 'todoNudges'
  | 'compactionThreshold'
  | 'editCheck'
> {
  return {
    llm: deps.llm,
    gate: deps.gate,
    sandbox: deps.sandbox,
    web: deps.web,
    editor: deps.editor,
    vision: deps.vision,
    approve: deps.approve,
    workspace: deps.workspace,
    maxIterations: deps.maxIterations,
    tokenBudget: deps.tokenBudget,
    budgetWarning: deps.budgetWarning,
    todoNudges: deps.todoNudges,
    compactionThreshold: deps.compactionThreshold,
    editCheck: deps.editCheck,
  };
}

/** The answers a paused run resumes with: the listed calls run, the other pending ones are declined. */
export function resumeAnswers(
  pending: ToolCall[],
  decisions: { approved: string[]; reason?: string },
): Map<string, ApprovalAnswer> {
  const approved = new Set(decisions.approved);
  return new Map(
    pending.map((call) => [
      call.id,
      approved.has(call.id) ? { decision: 'once' } : { decision: 'deny', reason: decisions.reason },
    ]),
  );
}

/**
 * What the first task of a new session starts with (the memory block): later requests extend the
 * first. `first`: the run is the session's first, with nothing steered in before it.
 */
export async function* sessionPreface(
  preface: SessionDeps['preface'],
  task: string | undefined,
  first: boolean,
  signal: AbortSignal | undefined,
): AsyncGenerator<AgentEvent, string | undefined> {
  if (!preface || task === undefined || !first) return undefined;
  try {
    return await preface(task, signal);
  } catch (err) {
    yield { type: 'warning', message: (err as Error).message };
    return undefined;
  }
}
