import type { ImagePart, ToolCall } from '../llm/types.js';
import type { ApprovalAnswer } from '../permissions/gate.js';
import { truncateMiddle } from '../tools/truncate.js';
import { blindNote } from './blind-note.js';
import { messageCap } from './context-budget.js';
import type { AgentEvent } from './events.js';
import type { RunState } from './run-state.js';
import { executeCalls } from './tool-execution.js';
import { toolResultMessage } from './tool-message.js';

/** How a turn's calls went, as the loop goes on from them. */
export interface CallsOutcome {
  /** Calls left waiting for an answer nobody could give: the run pauses. */
  pending: ToolCall[];
  /** The error output of each call that failed, by call id. */
  errors: Map<string, string>;
  /** Why no call could run: the sandbox could not be set up (each call was answered with that). */
  failed?: string;
  /** A call of a tool that ends the run succeeded. */
  ended: boolean;
  /** A hook said `continue: false`: why the run stops. */
  stopped?: string;
}

/** Runs calls and records their results in the history, as each comes. */
export async function* runCalls(
  run: RunState,
  calls: ToolCall[],
  answers?: ReadonlyMap<string, ApprovalAnswer>,
): AsyncGenerator<AgentEvent, CallsOutcome> {
  const errors = new Map<string, string>();
  const failed = yield* run.sandbox.settle();
  if (failed !== undefined) {
    for (const call of calls) run.append(toolResultMessage(call.id, false, `not run: ${failed}`));
    return { pending: [], errors, failed, ended: false };
  }
  const { options } = run;
  const images = new Map<string, ImagePart[]>();
  const execution = executeCalls(calls, {
    tools: options.tools,
    gate: options.gate,
    ctx: run.ctx,
    approve: options.approve,
    answers,
    onAudit: options.onAudit,
    steered: () => options.steering?.waiting() ?? false,
    hooks: options.hooks,
    onImages: (callId, found) => images.set(callId, found),
    beforeChange: options.checkpoint?.beforeChange,
    editCheck: options.editCheck,
  });
  for (;;) {
    const next = await execution.next();
    if (next.done) {
      appendImages(run, [...images.values()].flat());
      const { pending, ended, stopped } = next.value;
      return { pending, errors, ended: ended === true, ...(stopped !== undefined ? { stopped } : {}) };
    }
    const event = next.value;
    if (event.type === 'tool_result') {
      if (!event.ok) errors.set(event.callId, event.output);
      let output = truncateMiddle(event.output, messageCap(run.window), {
        hint: 'the output was cut to fit the context window; ask for less (offset/limit, grep, head)',
      }).text;
      if (images.has(event.callId) && options.vision === false) {
        output += `\n[${blindNote(options.llm.model)}: the image was not sent]`;
        images.delete(event.callId);
      }
      run.append(toolResultMessage(event.callId, event.ok, output));
    }
    yield event;
  }
}

/** Tool messages carry text only on most servers, so the images follow in one user message. */
function appendImages(run: RunState, shown: ImagePart[]): void {
  if (shown.length === 0) return;
  run.append({
    role: 'user',
    content: `[${shown.length === 1 ? 'the image' : `${shown.length} images`} from the tool results above]`,
    images: shown,
  });
}
