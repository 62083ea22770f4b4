import type { Speed, ToolCall } from '../llm/types.js';

export type StopReason =
  | 'completed'
  | 'max_iterations'
  | 'aborted'
  | 'error'
  /** Calls wait for approval and nobody could be asked; `resume` continues the run. */
  | 'paused'
  /** The model kept repeating itself after being told. */
  | 'loop'
  /** The token budget ran out. */
  | 'budget'
  /**
   * A UserPromptSubmit hook refused the task, or a hook said `continue: false` (its `stopReason`);
   * `text` says why, for the user only (the model is not told).
   */
  | 'blocked';

/**
 * Everything a run reports, in order. The CLI, the JSON-lines output, the gateway and the
 * library all consume this one union; it is plain JSON.
 */
export type AgentEvent = RunEvent | SubagentEvent;

/** First of every run of a stored session: which one it is (a script keeps `id` to resume it). */
export type SessionEvent = { type: 'session'; id: string; workspace: string; model: string };

/** What one agent's own run reports; a sub-agent's come wrapped in `subagent_event`. */
export type RunEvent =
  | SessionEvent
  | { type: 'turn_start'; turn: number }
  | { type: 'text_delta'; text: string }
  | { type: 'reasoning_delta'; text: string }
  /**
   * `text`, the answer text streamed since the last turn_start, was the model's reasoning (its
   * chat template had opened it; a bare closer showed it): no longer the answer. It follows as
   * `reasoning_delta`.
   */
  | { type: 'text_retracted'; text: string }
  /** Text and reasoning streamed since the last turn_start are void: the request is being retried. */
  | { type: 'retry'; attempt: number; delayMs: number; reason: string }
  /**
   * `label`: the call in one line, as the tool's declaration words it (absent for an invalid call).
   * `unwrapped`: the tool that runs and its arguments, when the model called it through `use_tool`
   * (`call` stays what the model wrote); surfaces show this one.
   */
  | { type: 'tool_call'; call: ToolCall; label?: string; unwrapped?: UnwrappedCall }
  /** The run waits for an answer about this call (see Approver); `preview` shows what it would change. */
  | {
      type: 'approval_request';
      call: ToolCall;
      summary: string;
      reason: string;
      preview?: string;
      unwrapped?: UnwrappedCall;
    }
  /**
   * Output a running call reported since its last progress event (a command's output as it
   * arrives). For people only: the model sees the final result.
   */
  | { type: 'tool_progress'; callId: string; name: string; output: string }
  | {
      type: 'tool_result';
      callId: string;
      /** The tool that ran (the named one, for a `use_tool` call); `tool_progress` names it too. */
      name: string;
      ok: boolean;
      output: string;
      display?: string;
      /**
       * What language servers or checkers found in the files the call changed (src/lsp/); also at
       * the end of `output`, which is what the model reads.
       */
      diagnostics?: string;
      /** How long the tool ran, to a hundredth of a millisecond. */
      ms: number;
    }
  /** One model request's tokens; `speed`: how fast it came, when the server told or Hearth measured. */
  | {
      type: 'usage';
      prompt: number;
      completion: number;
      contextUsed: number;
      contextWindow: number;
      speed?: Speed;
    }
  /** `method`: `elided` (old outputs became notes), `summary` (the model summarized), `trimmed`. */
  | { type: 'compaction'; before: number; after: number; method: 'elided' | 'summary' | 'trimmed' }
  /** A message the user sent while the run was going was added to the conversation here. */
  | { type: 'steer'; text: string }
  | { type: 'warning'; message: string }
  /**
   * `unsaved`: the run stopped because the session could not be stored (its database was away);
   * what was stored stays, so running the task again later is safe, and a queue should.
   */
  | { type: 'done'; reason: StopReason; text: string; turns: number; pending?: ToolCall[]; unsaved?: true };

/** The call a `use_tool` call stands for: the tool found through `tool_search`, and its arguments. */
export interface UnwrappedCall {
  name: string;
  arguments: string;
}

/** The call as people should see it: the real tool for a `use_tool` call, else the call itself. */
export function shownCall(event: { call: ToolCall; unwrapped?: UnwrappedCall }): {
  name: string;
  arguments: string;
} {
  return event.unwrapped ?? event.call;
}

/** How a sub-agent's work ended, as its contract (`report_result`) or its run's end says. */
export type SubagentStatus = 'done' | 'failed' | 'partial';

/**
 * A sub-agent's life inside its parent's stream. `id` is the child's stored session; `parentId`
 * the session that started it (the root's own id for its children); `depth` 1 for the root's
 * children. Events of a grandchild travel flat, each wrapped once with its own id and depth.
 */
export type SubagentEvent =
  | {
      type: 'subagent_start';
      id: string;
      parentId: string;
      /** The call of `parentId`'s run that started it. */
      parentCallId: string;
      depth: number;
      objective: string;
      /** The named agent definition it runs as, when one was asked for. */
      agent?: string;
      /** Its task id within a decomposition. */
      taskId?: string;
    }
  | { type: 'subagent_event'; id: string; depth: number; event: RunEvent }
  | {
      type: 'subagent_end';
      id: string;
      status: SubagentStatus;
      /** What it did, or for `failed` why it failed. */
      summary: string;
      /** Tokens spent by it and by its own sub-agents. */
      usage: { prompt: number; completion: number };
    };

export type DoneEvent = Extract<AgentEvent, { type: 'done' }>;
export type ToolResultEvent = Extract<AgentEvent, { type: 'tool_result' }>;
export type UsageEvent = Extract<AgentEvent, { type: 'usage' }>;
