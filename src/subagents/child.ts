import type { DoneEvent, RunEvent, SubagentEvent } from '../agent/events.js';
import type { AgentSession } from '../agent/session.js';
import type { SessionState } from '../tools/types.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import { REPORT_KEY, readContract } from './result.js';
import type { SlotWaitBoard } from './slot-line.js';
import type { SpawnCall, SubagentResult, SubagentTask } from './types.js';

export interface ChildRun {
  session: AgentSession;
  /** The child's own state, where its contract lands. */
  state: SessionState;
  task: SubagentTask;
  depth: number;
  /** The brief's message: the child's task. */
  message: string;
  call: SpawnCall;
  parentId: string;
  timeLimitMs: number;
  /** Where the child's requests say they wait in line for a server slot (time that does not count). */
  slotWaits?: SlotWaitBoard;
  /** Runs the time limit. */
  clock: Clock;
  /** Said in the child's stream before it starts (settings of its definition that were not applied). */
  notes: string[];
}

type Stop = 'parent' | 'time';

/**
 * Runs one child to its end and makes its result. Its events go to the parent's stream as they
 * come, each wrapped with its id and depth (a grandchild's already are, and pass as they are). The
 * child's run ends when it has reported (`report_result` ends a run, and SubagentStop hooks may
 * send it on, as Stop hooks do after an answer), when the parent is aborted, or at its time limit;
 * whatever happens, the parent gets a result, and the child's session keeps what it did.
 */
export async function runChild(run: ChildRun): Promise<SubagentResult> {
  const { session, task, depth, call } = run;
  const id = session.id;
  const relay = (event: SubagentEvent) => call.relay(event);
  const wrap = (event: RunEvent): SubagentEvent => ({ type: 'subagent_event', id, depth, event });
  relay({
    type: 'subagent_start',
    id,
    parentId: run.parentId,
    parentCallId: call.callId,
    depth,
    objective: task.objective,
    ...(task.agent ? { agent: task.agent } : {}),
    ...(task.taskId !== undefined ? { taskId: task.taskId } : {}),
  });
  for (const message of run.notes) relay(wrap({ type: 'warning', message }));

  const controller = new AbortController();
  let stop: Stop | undefined;
  const halt = (why: Stop) => {
    stop ??= why;
    controller.abort();
  };
  const onParentAbort = () => halt('parent');
  if (call.signal.aborted) halt('parent');
  else call.signal.addEventListener('abort', onParentAbort, { once: true });
  const limit = pausableTimeout(run.clock, run.timeLimitMs, () => halt('time'));
  if (run.slotWaits)
    run.slotWaits.listener = {
      waiting: (ahead) => {
        limit.pause();
        relay(
          wrap({
            type: 'warning',
            message: `Waiting for a free model server slot (${ahead} ${ahead === 1 ? 'request' : 'requests'} ahead); its time limit waits too.`,
          }),
        );
      },
      going: () => limit.resume(),
    };

  const usage = { prompt: 0, completion: 0 };
  const children = new Set<string>();
  let done: DoneEvent | undefined;
  let broke: string | undefined;
  try {
    for await (const event of session.run(run.message, controller.signal)) {
      if (isSubagentEvent(event)) {
        // A grandchild's: its usage counts here once, when it ends (it includes its own children's).
        if (event.type === 'subagent_start' && event.parentId === id) children.add(event.id);
        if (event.type === 'subagent_end' && children.has(event.id)) {
          usage.prompt += event.usage.prompt;
          usage.completion += event.usage.completion;
        }
        relay(event);
        continue;
      }
      relay(wrap(event));
      if (event.type === 'usage') {
        usage.prompt += event.prompt;
        usage.completion += event.completion;
      } else if (event.type === 'done') {
        done = event;
      }
    }
  } catch (err) {
    broke = err instanceof Error ? err.message : String(err);
  } finally {
    limit.clear();
    call.signal.removeEventListener('abort', onParentAbort);
  }

  const outcome = judge(run, done, stop, broke);
  const result: SubagentResult = {
    ...(task.taskId !== undefined ? { taskId: task.taskId } : {}),
    session: id,
    ...outcome,
    usage,
  };
  relay({ type: 'subagent_end', id, status: result.status, summary: result.summary, usage });
  return result;
}

/** The child's side of the contract if it reported, else what its end says. */
function judge(
  run: ChildRun,
  done: DoneEvent | undefined,
  stop: Stop | undefined,
  broke: string | undefined,
): Pick<SubagentResult, 'status' | 'summary' | 'deliverables' | 'notes'> {
  const contract = readContract(run.state.get(REPORT_KEY));
  if (contract) return contract;
  const last = lastWords(run.session);
  const failed = (summary: string) => ({
    status: 'failed' as const,
    summary: last ? `${summary} Its last words: ${last}` : summary,
    deliverables: [],
  });
  if (broke !== undefined) return failed(`It broke: ${broke}.`);
  if (stop === 'time') return failed(`Stopped: it ran past its time limit (${run.timeLimitMs / 1000}s).`);
  if (stop === 'parent') {
    return {
      status: 'partial',
      summary: last ? `Interrupted before it finished. So far: ${last}` : 'Interrupted before it finished.',
      deliverables: [],
    };
  }
  switch (done?.reason) {
    case 'completed':
      return {
        status: 'partial',
        summary: done.text.trim() || 'It ended without an answer.',
        deliverables: [],
        notes: 'It ended without reporting a result; the summary is its final answer.',
      };
    case 'paused':
      return failed(
        `It needed approval (${done.text}) and nobody could be asked. Allow such calls with --allow rules.`,
      );
    case 'error':
      return failed(`It failed: ${done.text}`);
    case 'blocked':
      // A hook's stopReason is for the user (who saw it in the child's stream), not for a model.
      return failed('A hook stopped it before it finished.');
    case 'loop':
    case 'max_iterations':
    case 'budget':
      return failed(`It hit its limit: ${done.text}`);
    default:
      return failed('It stopped without an answer.');
  }
}

/** The child's last text, for a result it did not write itself. */
function lastWords(session: AgentSession): string | undefined {
  for (let i = session.messages.length - 1; i > 0; i--) {
    const message = session.messages[i]!;
    if (message.role === 'user') return undefined;
    if (message.role === 'assistant' && message.content?.trim() && !message.content.startsWith('[')) {
      const text = message.content.trim();
      return text.length > 600 ? `${text.slice(0, 599)}…` : text;
    }
  }
  return undefined;
}

function isSubagentEvent(event: { type: string }): event is SubagentEvent {
  return event.type === 'subagent_start' || event.type === 'subagent_event' || event.type === 'subagent_end';
}

/** A time limit that stands still while paused (a child waiting for a server slot). */
function pausableTimeout(clock: Clock, ms: number, fire: () => void) {
  let left = ms;
  let since = clock.now();
  let handle: TimerHandle | undefined = clock.setTimeout(fire, ms);
  let over = false;
  return {
    pause() {
      if (!handle) return;
      clock.clearTimeout(handle);
      handle = undefined;
      left -= clock.now() - since;
    },
    resume() {
      if (handle || over) return;
      since = clock.now();
      handle = clock.setTimeout(fire, Math.max(0, left));
    },
    clear() {
      clock.clearTimeout(handle);
      handle = undefined;
      over = true;
    },
  };
}
