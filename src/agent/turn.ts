import type { AssistantMessage, LlmError, ToolCall, Usage } from '../llm/types.js';
import { compactRun } from './compaction-step.js';
import { messageCap } from './context-budget.js';
import { estimateHistoryTokens } from './context-size.js';
import type { AgentEvent, DoneEvent, UsageEvent } from './events.js';
import { pausedText } from './pending-calls.js';
import { consult, type Policy, type Reply, type Verdict } from './policies/policy.js';
import { capReply } from './reply-cap.js';
import { runCalls } from './run-calls.js';
import type { RunState } from './run-state.js';
import { takeSteering } from './steering.js';

type Streamed =
  | { reply: { message: AssistantMessage; toolCalls: ToolCall[]; usage?: Usage } }
  | { failed: LlmError }
  | { done: DoneEvent };

/**
 * One turn: take what the user sent meanwhile, compact when the history nears the window, ask the
 * model, record its reply, run its calls; the policies speak after each step. Resolves to the
 * run's last event, or undefined to go on with the next turn.
 */
export async function* runTurn(
  run: RunState,
  policies: readonly Policy[],
): AsyncGenerator<AgentEvent, DoneEvent | undefined> {
  if (run.signal.aborted) return run.done('aborted', '');
  yield* takeSteering(run);
  const threshold = run.options.compactionThreshold ?? 0.75;
  if (run.window > 0 && run.contextNow() > run.window * threshold && grownSinceNothing(run)) {
    const compacted = yield* compactRun(run);
    if (typeof compacted === 'object') return run.done('blocked', compacted.stop);
    run.nothingToCompactAt = compacted === 'none' ? run.contextNow() : undefined;
  }
  yield { type: 'turn_start', turn: run.turns + 1 };
  const streamed = yield* streamReply(run);
  if ('done' in streamed) return streamed.done;
  if ('failed' in streamed) return settle(yield* requestFailed(run, policies, streamed.failed));
  const reply = yield* recordReply(run, streamed.reply);
  const replied = yield* consult(policies, (p) => p.afterReply?.(reply, run));
  if (replied !== undefined) return settle(replied);
  if (reply.toolCalls.length === 0)
    return yield* endRun(run, policies, { text: reply.message.content ?? '', by: 'answer' });

  const calls = yield* runCalls(run, reply.toolCalls);
  if (calls.failed !== undefined) return run.done('error', calls.failed);
  if (calls.pending.length > 0) return run.done('paused', pausedText(calls.pending), calls.pending);
  if (calls.stopped !== undefined) return run.done('blocked', calls.stopped);
  if (run.signal.aborted) return run.done('aborted', '');
  // The work is reported (report_result): the run ends as after a final answer.
  if (calls.ended) return yield* endRun(run, policies, { text: reply.message.content ?? '', by: 'tool' });
  return settle(yield* consult(policies, (p) => p.afterCalls?.(reply, calls, run)));
}

/** The run would end: the policies may send the model on; otherwise it is complete. */
export async function* endRun(
  run: RunState,
  policies: readonly Policy[],
  ending: { text: string; by: 'answer' | 'tool' },
): AsyncGenerator<AgentEvent, DoneEvent | undefined> {
  const verdict = yield* consult(policies, (p) => p.beforeEnd?.(ending, run));
  return verdict === undefined ? run.done('completed', ending.text) : settle(verdict);
}

function settle(verdict: Verdict): DoneEvent | undefined {
  return verdict === 'again' ? undefined : verdict;
}

/** Streams the model's answer to the history as it stands, passing its events on. */
async function* streamReply(run: RunState): AsyncGenerator<AgentEvent, Streamed> {
  const { llm, tools } = run.options;
  let partial = '';
  let reply: { message: AssistantMessage; toolCalls: ToolCall[]; usage?: Usage } | undefined;
  for await (const event of llm.stream({
    messages: run.messages,
    tools: tools.schemas(),
    signal: run.signal,
  })) {
    run.sandbox.prepare();
    if (event.type === 'text_delta') partial += event.text;
    if (event.type === 'retry' || event.type === 'text_retracted') partial = '';
    if (event.type === 'error') {
      if (event.error.kind !== 'aborted' && !run.signal.aborted) return { failed: event.error };
      // What the user saw stays in the history, and user and assistant keep alternating (strict
      // chat templates reject two user messages in a row when the next task comes).
      run.append({
        role: 'assistant',
        content: `${partial.trim() ? `${partial.trim()}\n\n` : ''}[interrupted by the user]`,
      });
      return { done: run.done('aborted', partial) };
    }
    if (event.type === 'done') reply = event;
    else yield event;
  }
  return reply ? { reply } : { done: run.done('error', 'The model stream ended without a reply.') };
}

/** A failed request: a policy may retry it; else it is recorded as the assistant's turn, so roles keep alternating. */
async function* requestFailed(
  run: RunState,
  policies: readonly Policy[],
  error: LlmError,
): AsyncGenerator<AgentEvent, Verdict> {
  const verdict = yield* consult(policies, (p) => p.requestFailed?.(error, run));
  if (verdict === 'again') return verdict;
  run.append({ role: 'assistant', content: `[no reply: the request failed: ${error.message}]` });
  return verdict ?? run.done('error', error.message);
}

/** Caps the reply to the window, appends it and reports its usage. */
async function* recordReply(
  run: RunState,
  streamed: { message: AssistantMessage; toolCalls: ToolCall[]; usage?: Usage },
): AsyncGenerator<AgentEvent, Reply> {
  const capped = capReply(streamed.message, streamed.toolCalls, messageCap(run.window));
  if (capped.warning) yield { type: 'warning', message: capped.warning };
  run.append(capped.message);
  run.turns++;
  const usage = usageEvent(streamed.usage, run);
  if (streamed.usage && streamed.usage.prompt > 0)
    run.measured = { tokens: usage.contextUsed, length: run.messages.length };
  yield usage;
  return { message: capped.message, toolCalls: capped.toolCalls, usage };
}

function usageEvent(usage: Usage | undefined, run: RunState): UsageEvent {
  const prompt = usage?.prompt ?? 0;
  const completion = usage?.completion ?? 0;
  // Some local servers report no usage or zeros; an estimate keeps the context meter honest.
  const contextUsed = prompt > 0 ? prompt + completion : estimateHistoryTokens(run.messages);
  const speed = usage?.speed ? { speed: usage.speed } : {};
  return { type: 'usage', prompt, completion, contextUsed, contextWindow: run.window, ...speed };
}

/**
 * A history compaction could not shrink is tried again (and the user warned again) only once it
 * has grown by this share of the window: not at every step while it stays at the brink.
 */
const RETRY_GROWTH_SHARE = 0.1;

function grownSinceNothing(run: RunState): boolean {
  const at = run.nothingToCompactAt;
  return at === undefined || run.contextNow() >= at + run.window * RETRY_GROWTH_SHARE;
}
