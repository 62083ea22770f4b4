/**
 * Counts one attempt's events into its metrics: tokens (with what the server processed and took
 * from its cache), tool calls and the ways they failed, loop-guard stops and compactions. Sub-agents'
 * tokens count for the attempt that spawned them.
 */
import type { AgentEvent, RunEvent } from '../agent/events.js';
import type { ToolCall } from '../llm/types.js';
import type { EvalMetrics } from '../store/eval-results.js';
import type { ToolRegistry } from '../tools/registry.js';

export type CallProblem = 'unparsed' | 'invalid' | 'unknown';

/** Why the registry refuses a call, or undefined when it would run. */
function callProblem(tools: ToolRegistry, call: ToolCall): CallProblem | undefined {
  if (tools.prepare(call).ok) return undefined;
  if (call.problem) return 'unparsed';
  if (!tools.schemaOf(call.name)) return 'unknown';
  try {
    if (call.arguments.trim() !== '') JSON.parse(call.arguments);
  } catch {
    return 'unparsed';
  }
  return 'invalid';
}

export function emptyMetrics(): EvalMetrics {
  return {
    promptTokens: 0,
    completionTokens: 0,
    processedTokens: 0,
    cachedTokens: 0,
    wallMs: 0,
    turns: 0,
    toolCalls: 0,
    unparsedCalls: 0,
    invalidArgs: 0,
    unknownTools: 0,
    loopStops: 0,
    compactions: 0,
    stop: 'none',
  };
}

export class Tally {
  readonly metrics: EvalMetrics = emptyMetrics();

  constructor(private readonly tools: ToolRegistry) {}

  add(event: AgentEvent): void {
    const m = this.metrics;
    if (event.type === 'subagent_end') {
      m.promptTokens += event.usage.prompt;
      m.completionTokens += event.usage.completion;
      return;
    }
    if (event.type === 'subagent_event' || event.type === 'subagent_start') return;
    this.addRun(event);
  }

  private addRun(event: RunEvent): void {
    const m = this.metrics;
    switch (event.type) {
      case 'usage':
        m.promptTokens += event.prompt;
        m.completionTokens += event.completion;
        m.cachedTokens += event.speed?.cached ?? 0;
        m.processedTokens += event.speed?.processed ?? 0;
        return;
      case 'tool_call': {
        m.toolCalls++;
        const problem = callProblem(this.tools, event.call);
        if (problem === 'unparsed') m.unparsedCalls++;
        else if (problem === 'invalid') m.invalidArgs++;
        else if (problem === 'unknown') m.unknownTools++;
        return;
      }
      case 'compaction':
        m.compactions++;
        return;
      case 'done':
        m.turns = event.turns;
        m.stop = event.reason;
        if (event.reason === 'loop') m.loopStops++;
        return;
      default:
        return;
    }
  }
}
