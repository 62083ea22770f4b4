import { type AgentEvent, shownCall } from '../agent/events.js';

/** `bounded` is a normal run; `deep_work` has the higher limits and the push to finish todos. */
export type RunMode = 'bounded' | 'deep_work';

/** What a run knows that its events do not carry, filled into the agent_computer protocol's fields. */
export interface RunFacts {
  model: string;
  mode: RunMode;
  maxIterations: number;
  tokenBudget?: number;
  /** Tokens spent so far in this run, summed over its usage events. */
  usage: { prompt: number; completion: number };
}

/** One event as clients receive it over WebSocket and SSE (before its `seq` is added). */
export type WireEvent = { type: string } & Record<string, unknown>;

/** The preview length of a tool result, as in the agent_computer protocol. */
const RESULT_PREVIEW_CHARS = 500;

/**
 * The gateway speaks the agent_computer seed's protocol, so its clients keep working: turns are
 * `thinking`, streamed answer text is `text`, tool events carry `tool`, `input`, `result_preview`,
 * `duration_ms` and `success`, and `done` has `iterations`, `model`, `usage` and `mode`. Hearth's
 * own fields stay beside them; Hearth's own event types (and any added later) pass through with the
 * same JSON as `--json` prints.
 */
export function toWire(event: AgentEvent, facts: RunFacts): WireEvent {
  switch (event.type) {
    case 'turn_start':
      return {
        type: 'thinking',
        iteration: event.turn,
        max_iterations: facts.maxIterations,
        tokens_used: facts.usage.prompt + facts.usage.completion,
        token_budget: facts.tokenBudget ?? null,
      };
    case 'text_delta':
      return { type: 'text', text: event.text };
    case 'reasoning_delta':
      return { type: 'reasoning', text: event.text };
    case 'tool_call':
      // `tool` and `input` are what runs: a use_tool call's named tool (what the model wrote stays in the history).
      return {
        type: 'tool_call',
        tool: shownCall(event).name,
        input: parseArguments(shownCall(event).arguments),
        tool_call_id: event.call.id,
        ...(event.label === undefined ? {} : { label: event.label }),
      };
    case 'tool_result':
      return {
        type: 'tool_result',
        tool: event.name,
        tool_call_id: event.callId,
        result_preview: event.output.slice(0, RESULT_PREVIEW_CHARS),
        result_length: event.output.length,
        duration_ms: Math.round(event.ms),
        success: event.ok,
        output: event.output,
        ...(event.display === undefined ? {} : { display: event.display }),
      };
    case 'approval_request':
      return {
        ...event,
        tool_call_id: event.call.id,
        tool: shownCall(event).name,
        input: parseArguments(shownCall(event).arguments),
      };
    case 'done':
      return {
        type: 'done',
        text: event.text,
        iterations: event.turns,
        model: facts.model,
        usage: usageJson(facts.usage),
        mode: facts.mode,
        reason: event.reason,
        ...(event.pending ? { pending: event.pending } : {}),
      };
    default:
      return event;
  }
}

export function usageJson(usage: { prompt: number; completion: number }) {
  return {
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.prompt + usage.completion,
  };
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
