import type { LlmClient } from '../llm/client.js';
import { estimateTokens } from '../llm/tokens.js';
import type { AssistantMessage, ChatMessage, ToolCall, Usage } from '../llm/types.js';
import type { PermissionPolicy } from '../permissions/policy.js';
import type { PreparedCall, ToolRegistry, ToolResult } from '../tools/registry.js';
import { MemoryState, type SessionState, type ToolContext } from '../tools/types.js';
import type { AgentEvent, StopReason } from './events.js';

export interface RunAgentOptions {
  llm: LlmClient;
  tools: ToolRegistry;
  /** The conversation so far, system prompt first. The run appends to it in place. */
  messages: ChatMessage[];
  /** Appended as a user message before the first turn. */
  task?: string;
  workspace: string;
  policy: PermissionPolicy;
  maxIterations: number;
  /** Known context window in tokens, 0 when unknown; reported with usage. */
  contextWindow?: number;
  signal?: AbortSignal;
  /** Per-session tool state (the shell's directory, edit failure counts, ...). */
  session?: Map<string, unknown>;
  /** Durable per-session state for tools (todos, plan, checkpoints). */
  state?: SessionState;
  /** Called with every message appended to the history, as it is appended. */
  onMessage?: (message: ChatMessage) => void;
}

const EMPTY_REPLY_NUDGE =
  'Your last reply was empty. Continue the task: call a tool, or give your final answer as text.';

/** The agent loop: asks the model, runs the tools it calls, repeats until it answers in text. */
export async function* runAgent(options: RunAgentOptions): AsyncGenerator<AgentEvent> {
  const { llm, tools, messages, signal } = options;
  const abortSignal = signal ?? new AbortController().signal;
  const ctx: ToolContext = {
    workspace: options.workspace,
    signal: abortSignal,
    session: options.session ?? new Map(),
    state: options.state ?? new MemoryState(),
  };
  const append = (message: ChatMessage) => {
    messages.push(message);
    options.onMessage?.(message);
  };
  const done = (reason: StopReason, text: string, turns: number): AgentEvent => ({
    type: 'done',
    reason,
    text,
    turns,
  });

  if (options.task !== undefined) append({ role: 'user', content: options.task });
  let nudged = false;

  for (let turn = 1; turn <= options.maxIterations; turn++) {
    if (abortSignal.aborted) return yield done('aborted', '', turn - 1);
    yield { type: 'turn_start', turn };

    let reply: { message: AssistantMessage; toolCalls: ToolCall[]; usage?: Usage } | undefined;
    for await (const event of llm.stream({ messages, tools: tools.schemas(), signal: abortSignal })) {
      if (event.type === 'error') {
        if (event.error.kind === 'aborted' || abortSignal.aborted) return yield done('aborted', '', turn - 1);
        yield { type: 'warning', message: event.error.message };
        return yield done('error', event.error.message, turn - 1);
      }
      if (event.type === 'done') reply = event;
      else yield event;
    }
    if (!reply) return yield done('error', 'The model stream ended without a reply.', turn - 1);

    append(reply.message);
    yield usageEvent(reply.usage, messages, options.contextWindow ?? 0);

    if (reply.toolCalls.length === 0) {
      const text = reply.message.content ?? '';
      if (text.trim() === '' && !nudged) {
        nudged = true;
        yield { type: 'warning', message: 'The model sent an empty reply; asking it to continue.' };
        append({ role: 'user', content: EMPTY_REPLY_NUDGE });
        continue;
      }
      return yield done('completed', text, turn);
    }
    nudged = false;

    for await (const result of executeCalls(reply.toolCalls, tools, options.policy, ctx)) {
      if ('call' in result) {
        yield { type: 'tool_call', call: result.call };
        continue;
      }
      yield result.event;
      append({
        role: 'tool',
        tool_call_id: result.event.callId,
        content: result.event.ok ? result.event.output : `Error: ${result.event.output}`,
      });
    }
    if (abortSignal.aborted) return yield done('aborted', '', turn);
  }
  yield done(
    'max_iterations',
    `Stopped after ${options.maxIterations} turns without a final answer.`,
    options.maxIterations,
  );
}

type ResultEvent = Extract<AgentEvent, { type: 'tool_result' }>;

/**
 * Runs one turn's calls. Consecutive read-only calls run concurrently; a mutating call runs
 * alone, in order. Results come out in call order, and every call gets a result (even when
 * cancelled) so the history stays valid for the next request.
 */
async function* executeCalls(
  calls: ToolCall[],
  tools: ToolRegistry,
  policy: PermissionPolicy,
  ctx: ToolContext,
): AsyncGenerator<{ call: ToolCall } | { event: ResultEvent }> {
  const prepared = calls.map((call) => ({ call, prepared: tools.prepare(call) }));
  let i = 0;
  while (i < prepared.length) {
    const batch = [prepared[i]!];
    const concurrent = isReadOnly(prepared[i]!.prepared);
    i++;
    while (concurrent && i < prepared.length && isReadOnly(prepared[i]!.prepared)) batch.push(prepared[i++]!);

    for (const item of batch) yield { call: item.call };
    const results = await Promise.all(
      batch.map((item) => runOne(item.call, item.prepared, tools, policy, ctx)),
    );
    for (const [n, result] of results.entries()) {
      const call = batch[n]!.call;
      yield { event: { type: 'tool_result', callId: call.id, name: call.name, ...result } };
    }
  }
}

function isReadOnly(prepared: PreparedCall): boolean {
  return !prepared.ok || !prepared.tool.mutates;
}

async function runOne(
  call: ToolCall,
  prepared: PreparedCall,
  tools: ToolRegistry,
  policy: PermissionPolicy,
  ctx: ToolContext,
): Promise<Omit<ToolResult, 'meta'>> {
  if (!prepared.ok) return { ok: false, output: prepared.error, ms: 0 };
  if (ctx.signal.aborted) return { ok: false, output: 'Cancelled by the user before it ran.', ms: 0 };
  const decision = await policy(call, prepared.tool);
  if (!decision.allow) return { ok: false, output: decision.reason, ms: 0 };
  const { meta: _meta, ...result } = await tools.run(prepared, ctx);
  return result;
}

function usageEvent(usage: Usage | undefined, messages: ChatMessage[], contextWindow: number): AgentEvent {
  const prompt = usage?.prompt ?? 0;
  const completion = usage?.completion ?? 0;
  // Some local servers report no usage or zeros; an estimate keeps the context meter honest.
  const contextUsed = prompt > 0 ? prompt + completion : estimateHistoryTokens(messages);
  return { type: 'usage', prompt, completion, contextUsed, contextWindow };
}

const messageTokens = new WeakMap<ChatMessage, number>();

/** Estimated tokens of a history, for servers that report no usage. Cached per message: history only grows. */
export function estimateHistoryTokens(messages: ChatMessage[]): number {
  let total = 0;
  for (const m of messages) {
    let n = messageTokens.get(m);
    if (n === undefined) {
      n = 4 + estimateTokens(m.content ?? '');
      if (m.role === 'assistant')
        for (const c of m.tool_calls ?? []) n += estimateTokens(c.function.name + c.function.arguments);
      messageTokens.set(m, n);
    }
    total += n;
  }
  return total;
}
