import type { ToolCall } from '../llm/types.js';

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
  /** A UserPromptSubmit hook refused the task; `text` says why. */
  | 'blocked';

/**
 * Everything a run reports, in order. The CLI, the JSON-lines output, the gateway and the
 * library all consume this one union; it is plain JSON.
 */
export type AgentEvent =
  /** First of every run of a stored session: which one it is (a script keeps `id` to resume it). */
  | { type: 'session'; id: string; workspace: string; model: string }
  | { type: 'turn_start'; turn: number }
  | { type: 'text_delta'; text: string }
  | { type: 'reasoning_delta'; text: string }
  /** Text and reasoning streamed since the last turn_start are void: the request is being retried. */
  | { type: 'retry'; attempt: number; delayMs: number; reason: string }
  /** `label`: the call in one line, as the tool's declaration words it (absent for an invalid call). */
  | { type: 'tool_call'; call: ToolCall; label?: string }
  /** The run waits for an answer about this call (see Approver); `preview` shows what it would change. */
  | { type: 'approval_request'; call: ToolCall; summary: string; reason: string; preview?: string }
  /**
   * Output a running call reported since its last progress event (a command's output as it
   * arrives). For people only: the model sees the final result.
   */
  | { type: 'tool_progress'; callId: string; name: string; output: string }
  | {
      type: 'tool_result';
      callId: string;
      name: string;
      ok: boolean;
      output: string;
      display?: string;
      ms: number;
    }
  | { type: 'usage'; prompt: number; completion: number; contextUsed: number; contextWindow: number }
  /** `method`: `elided` (old outputs became notes), `summary` (the model summarized), `trimmed`. */
  | { type: 'compaction'; before: number; after: number; method: 'elided' | 'summary' | 'trimmed' }
  /** A message the user sent while the run was going was added to the conversation here. */
  | { type: 'steer'; text: string }
  | { type: 'warning'; message: string }
  | { type: 'done'; reason: StopReason; text: string; turns: number; pending?: ToolCall[] };

export type DoneEvent = Extract<AgentEvent, { type: 'done' }>;
export type ToolResultEvent = Extract<AgentEvent, { type: 'tool_result' }>;
