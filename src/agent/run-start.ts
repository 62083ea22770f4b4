import { fitImages } from '../llm/image-fit.js';
import type { ImagePart } from '../llm/types.js';
import { blindNote } from './blind-note.js';
import { rememberRequest } from './compaction.js';
import { hookNotes } from './compaction-step.js';
import type { AgentEvent, DoneEvent } from './events.js';
import { pausedText, unansweredCalls } from './pending-calls.js';
import type { Policy } from './policies/policy.js';
import { runCalls } from './run-calls.js';
import type { RunState } from './run-state.js';
import { takeSteering } from './steering.js';
import { endRun } from './turn.js';

/**
 * What comes before the first request: the task's images checked, the calls a paused run left
 * settled, the messages sent meanwhile and the task added. Resolves to the run's last event when
 * it ends before the model is asked.
 */
export async function* startRun(
  run: RunState,
  policies: readonly Policy[],
): AsyncGenerator<AgentEvent, DoneEvent | undefined> {
  // Images with the task are checked before anything is added: a model that cannot see would answer
  // as if there were none, and one a server cannot decode would fail every later request.
  const images = await taskImages(run);
  if (!Array.isArray(images)) return images;
  const settled = yield* settleWaiting(run, policies);
  if (settled) return settled;
  // Messages sent while no run was going come before this run's task, as they were sent before it.
  yield* takeSteering(run);
  return yield* addTask(run, images);
}

async function taskImages(run: RunState): Promise<ImagePart[] | DoneEvent> {
  const { taskImages: given, vision, llm } = run.options;
  if (!given?.length) return [];
  if (vision === false) return run.done('error', blindNote(llm.model));
  const fitted = await fitImages(given);
  if (fitted.failures.length > 0)
    return run.done('error', `The image was not sent: ${fitted.failures.join('; ')}.`);
  return fitted.images;
}

/** A paused (or interrupted) run left calls without results: settle them before asking the model again. */
async function* settleWaiting(
  run: RunState,
  policies: readonly Policy[],
): AsyncGenerator<AgentEvent, DoneEvent | undefined> {
  const waiting = unansweredCalls(run.messages);
  if (waiting.length === 0) return undefined;
  const { pending, failed, ended, stopped } = yield* runCalls(run, waiting, run.options.answers);
  if (failed !== undefined) return run.done('error', failed);
  if (pending.length > 0) return run.done('paused', pausedText(pending), pending);
  if (stopped !== undefined) return run.done('blocked', stopped);
  if (ended) return yield* endRun(run, policies, { text: '', by: 'tool' });
  return undefined;
}

/** The task as its user message: the memory block before it, what hooks add after it. */
async function* addTask(
  run: RunState,
  images: ImagePart[],
): AsyncGenerator<AgentEvent, DoneEvent | undefined> {
  const { task, hooks, preface, startContext } = run.options;
  if (task === undefined) return undefined;
  const submitted = await hooks?.userPromptSubmit(task, run.signal);
  if (submitted) yield* hookNotes(submitted);
  if (submitted?.block || submitted?.stop) {
    // Claude Code's contract: a blocked prompt is dropped, and the reason is for the user only.
    const why = submitted.block ?? submitted.stop!;
    return run.done('blocked', `A UserPromptSubmit hook blocked the prompt: ${why}`);
  }
  const context = [...(startContext ?? []), ...(submitted?.context ?? [])];
  const asked = preface ? `${preface}\n\n${task}` : task;
  const content = context.length > 0 ? `${asked}\n\n${context.join('\n\n')}` : asked;
  run.append({ role: 'user', content, ...(images.length > 0 ? { images } : {}) });
  rememberRequest(run.ctx.durable, task);
  return undefined;
}
