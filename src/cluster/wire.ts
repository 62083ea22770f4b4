import { type AgentEvent, type DoneEvent, shownCall } from '../agent/events.js';

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
        ...(event.diagnostics === undefined ? {} : { diagnostics: event.diagnostics }),
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

/**
 * One run's events as the wire carries them, with its usage summed into `facts` as they pass (a
 * `thinking` and the `done` report the tokens spent so far). The gateway and `hearth worker` both
 * record runs through it.
 */
export function wireRun(facts: RunFacts): (event: AgentEvent) => WireEvent {
  return (event) => {
    if (event.type === 'usage') {
      facts.usage.prompt += event.prompt;
      facts.usage.completion += event.completion;
    }
    return toWire(event, facts);
  };
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

/**
 * The inverse of `toWire` for terminal clients (`hearth attach`): a session event as the gateway
 * sends it, back as the `AgentEvent` the CLI's renderers read. Undefined for the gateway's own
 * events (`user_message`, `approval_resolved`, `task_update`, `mode_changed`, `cleared`, `error`,
 * and the per-client replies), which a client handles itself. The fields read are not trusted to
 * be what they should be: a missing one becomes an empty value, never an exception.
 */
export function fromWire(wire: WireEvent): AgentEvent | undefined {
  const text = (key: string) => (typeof wire[key] === 'string' ? (wire[key] as string) : '');
  const count = (key: string) => (typeof wire[key] === 'number' ? (wire[key] as number) : 0);
  switch (wire.type) {
    case 'thinking':
      return { type: 'turn_start', turn: count('iteration') };
    case 'text':
      return { type: 'text_delta', text: text('text') };
    case 'reasoning':
      return { type: 'reasoning_delta', text: text('text') };
    case 'tool_call': {
      const input = wire.input;
      return {
        type: 'tool_call',
        call: {
          id: text('tool_call_id'),
          name: text('tool'),
          arguments: typeof input === 'string' ? input : JSON.stringify(input ?? {}),
        },
        ...(typeof wire.label === 'string' ? { label: wire.label } : {}),
      };
    }
    case 'tool_result':
      return {
        type: 'tool_result',
        callId: text('tool_call_id'),
        name: text('tool'),
        ok: wire.success === true,
        output: text('output') || text('result_preview'),
        ...(typeof wire.display === 'string' ? { display: wire.display } : {}),
        ...(typeof wire.diagnostics === 'string' ? { diagnostics: wire.diagnostics } : {}),
        ms: count('duration_ms'),
      };
    case 'done':
      return {
        type: 'done',
        reason: (text('reason') || 'completed') as DoneEvent['reason'],
        text: text('text'),
        turns: count('iterations'),
      };
    case 'session':
    case 'turn_start':
    case 'text_delta':
    case 'reasoning_delta':
    case 'text_retracted':
    case 'retry':
    case 'approval_request':
    case 'tool_progress':
    case 'usage':
    case 'compaction':
    case 'steer':
    case 'warning':
    case 'subagent_start':
    case 'subagent_event':
    case 'subagent_end':
      return wire as unknown as AgentEvent;
    default:
      return undefined;
  }
}
