import type { ToolCall } from '../llm/types.js';
import type { ApprovalAnswer, Approver, PermissionGate } from '../permissions/gate.js';
import type { AuditEntry } from '../store/sessions.js';
import type { PreparedCall, ToolRegistry } from '../tools/registry.js';
import type { ToolContext } from '../tools/types.js';
import type { AgentEvent, SubagentEvent, ToolResultEvent } from './events.js';
import { ProgressChannel, withProgress } from './progress-channel.js';

export interface ExecutionDeps {
  tools: ToolRegistry;
  gate: PermissionGate;
  ctx: ToolContext;
  /** Unset: a call that needs an answer pauses the run instead. */
  approve?: Approver;
  /** Answers already given for calls of a paused run, by call id. */
  answers?: ReadonlyMap<string, ApprovalAnswer>;
  onAudit?: (entry: AuditEntry) => void;
  /** True when the user sent a message during the turn: calls not yet started are then skipped. */
  steered?: () => boolean;
}

/** Events of one turn's tool calls, then the calls left waiting (empty unless paused). */
export type ExecutionEvent =
  | Extract<AgentEvent, { type: 'tool_call' | 'approval_request' | 'tool_progress' }>
  | ToolResultEvent
  | SubagentEvent;

const SKIPPED_FOR_STEERING =
  'Not run: the user sent a new message before this call started. Read it, then decide what to call.';

type Step = { call: ToolCall; prepared: PreparedCall };

/**
 * Runs one turn's calls. Consecutive read-only calls that need no answer run concurrently; any
 * other call runs alone, in order. Results come out in call order. Returns the calls still
 * waiting for approval when nobody could be asked (the run then pauses).
 */
export async function* executeCalls(
  calls: ToolCall[],
  deps: ExecutionDeps,
): AsyncGenerator<ExecutionEvent, ToolCall[]> {
  const steps: Step[] = calls.map((call) => ({ call, prepared: deps.tools.prepare(call) }));
  const progress = new ProgressChannel();
  let i = 0;
  while (i < steps.length) {
    if (i > 0 && deps.steered?.()) {
      for (const step of steps.slice(i)) {
        yield announce(step, deps);
        yield finish(step, deps, 'skipped', { ok: false, output: SKIPPED_FOR_STEERING });
      }
      break;
    }
    const batch: Step[] = [];
    while (i < steps.length && (await runsFreely(steps[i]!, deps))) batch.push(steps[i++]!);
    if (batch.length > 0) {
      for (const step of batch) yield announce(step, deps);
      const results = yield* withProgress(
        progress,
        Promise.all(batch.map((step) => run(step, deps, progress, 'allowed', undefined))),
      );
      for (const result of results) yield result;
      continue;
    }

    const step = steps[i]!;
    yield announce(step, deps);
    if (!step.prepared.ok) {
      yield finish(step, deps, 'invalid', { ok: false, output: step.prepared.error });
      i++;
      continue;
    }
    const { tool, args } = step.prepared;
    if (deps.ctx.signal.aborted) {
      yield finish(step, deps, 'cancelled', { ok: false, output: 'Cancelled by the user before it ran.' });
      i++;
      continue;
    }
    const verdict = await deps.gate.check(tool, args, deps.ctx.durable);
    if (verdict.action === 'deny') {
      yield finish(step, deps, 'denied', { ok: false, output: verdict.reason }, verdict.rule);
      i++;
      continue;
    }
    if (verdict.action === 'allow') {
      yield yield* withProgress(progress, run(step, deps, progress, 'allowed', verdict.rule));
      i++;
      continue;
    }

    let answer = deps.answers?.get(step.call.id);
    if (!answer) {
      if (!deps.approve) return steps.slice(i).map((s) => s.call);
      const preview = await tool.preview?.(args, { workspace: deps.ctx.workspace }).catch(() => undefined);
      const request = {
        call: step.call,
        summary: await deps.gate.summary(tool, args),
        reason: verdict.reason,
        ...(preview === undefined ? {} : { preview }),
        allowRules: await deps.gate.allowRules(tool, args),
        ...(verdict.secret ? { secret: true } : {}),
        ...(verdict.personOnly ? { personOnly: true } : {}),
      };
      yield { type: 'approval_request', ...request };
      answer = await deps
        .approve(request, deps.ctx.signal)
        .catch((): ApprovalAnswer => ({ decision: 'deny', reason: 'the approval prompt failed' }));
    }
    if (answer.decision === 'deny') {
      yield finish(step, deps, 'declined', {
        ok: false,
        output: `Not run: ${answer.reason ?? 'the user said no'}. Do not retry it unchanged; adjust, or ask the user.`,
      });
    } else {
      const rule =
        answer.decision === 'always'
          ? (await deps.gate.remember(tool, args, deps.ctx.durable)).join(', ')
          : undefined;
      const decision = answer.decision === 'always' ? 'approved_always' : 'approved';
      yield yield* withProgress(progress, run(step, deps, progress, decision, rule));
    }
    i++;
  }
  return [];
}

/** The tool_call event, with the call in one line as the tool's declaration words it. */
function announce(step: Step, deps: ExecutionDeps): Extract<ExecutionEvent, { type: 'tool_call' }> {
  if (!step.prepared.ok) return { type: 'tool_call', call: step.call };
  return {
    type: 'tool_call',
    call: step.call,
    label: deps.gate.label(step.prepared.tool, step.prepared.args),
  };
}

/** A call that may run right away and alongside others: valid, read-only and allowed. */
async function runsFreely(step: Step, deps: ExecutionDeps): Promise<boolean> {
  if (!step.prepared.ok || step.prepared.tool.mutates || deps.ctx.signal.aborted) return false;
  return (await deps.gate.check(step.prepared.tool, step.prepared.args, deps.ctx.durable)).action === 'allow';
}

async function run(
  step: Step,
  deps: ExecutionDeps,
  channel: ProgressChannel,
  decision: string,
  rule: string | undefined,
): Promise<ToolResultEvent> {
  const prepared = step.prepared as Extract<PreparedCall, { ok: true }>;
  let finished = false;
  const progress = channel.reporter(step.call.id, step.call.name, () => finished);
  const leavesOut = deps.gate.secretFilter(prepared.tool.name, deps.ctx.durable);
  const result = await deps.tools.run(prepared, {
    ...deps.ctx,
    progress,
    leavesOut: (file) => leavesOut(file),
    callId: step.call.id,
    relay: (event) => channel.relay(event),
  });
  finished = true;
  const exitCode = result.meta?.exitCode;
  return finish(step, deps, decision, result, rule, typeof exitCode === 'number' ? exitCode : undefined);
}

function finish(
  step: Step,
  deps: ExecutionDeps,
  decision: string,
  result: { ok: boolean; output: string; display?: string; ms?: number },
  rule?: string,
  exitCode?: number,
): ToolResultEvent {
  deps.onAudit?.({
    // The real tool, also when it was called through use_tool.
    tool: step.prepared.ok ? step.prepared.tool.name : step.call.name,
    arguments: step.call.arguments,
    decision,
    rule,
    durationMs: result.ms,
    exitCode,
  });
  return {
    type: 'tool_result',
    callId: step.call.id,
    name: step.call.name,
    ok: result.ok,
    output: result.output,
    display: result.display,
    ms: result.ms ?? 0,
  };
}
