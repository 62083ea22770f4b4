import type { SessionHooks } from '../hooks/hooks.js';
import { fitImages } from '../llm/image-fit.js';
import type { ImagePart, ToolCall } from '../llm/types.js';
import type { ApprovalAnswer, Approver, PermissionGate } from '../permissions/gate.js';
import type { AuditEntry } from '../store/sessions.js';
import { fromClaudeToolInput } from '../tools/claude-names.js';
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
  /** The session's hooks: PreToolUse before the permission check, PostToolUse after the run, Notification at a question. */
  hooks?: SessionHooks;
  /** Receives the images a call returned (read_file on an image), scaled down, before its result event. */
  onImages?: (callId: string, images: ImagePart[]) => void;
}

/** Events of one turn's tool calls, then the calls left waiting (empty unless paused). */
export type ExecutionEvent =
  | Extract<AgentEvent, { type: 'tool_call' | 'approval_request' | 'tool_progress' | 'warning' }>
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
  /** What hooks said for the user while calls ran; yielded before the results. */
  const notes: string[] = [];
  const warnings = function* (): Generator<ExecutionEvent> {
    for (const message of notes.splice(0)) yield { type: 'warning', message };
  };
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
        Promise.all(batch.map((step) => run(step, deps, progress, notes, 'allowed', undefined))),
      );
      yield* warnings();
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
    if (deps.ctx.signal.aborted) {
      yield finish(step, deps, 'cancelled', { ok: false, output: 'Cancelled by the user before it ran.' });
      i++;
      continue;
    }
    const hooked = await preToolUse(step, deps);
    notes.push(...hooked.notes);
    yield* warnings();
    if ('refused' in hooked) {
      yield finish(step, deps, hooked.decision, { ok: false, output: hooked.refused });
      i++;
      continue;
    }
    const { tool, args } = step.prepared;
    let verdict = await deps.gate.check(tool, args, deps.ctx.durable, { preapproved: hooked.allow });
    if (verdict.action === 'allow' && hooked.ask !== undefined)
      verdict = { action: 'ask', reason: hooked.ask };
    if (verdict.action === 'deny') {
      yield finish(step, deps, 'denied', { ok: false, output: verdict.reason }, verdict.rule);
      i++;
      continue;
    }
    if (verdict.action === 'allow') {
      yield yield* withProgress(progress, run(step, deps, progress, notes, 'allowed', verdict.rule));
      yield* warnings();
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
      const notified = await deps.hooks?.notification(
        `Hearth needs your permission: ${request.summary}`,
        deps.ctx.signal,
      );
      notes.push(...(notified?.notes ?? []));
      yield* warnings();
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
      yield yield* withProgress(progress, run(step, deps, progress, notes, decision, rule));
      yield* warnings();
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

/** What the PreToolUse hooks made of a call: refused (with the result the model gets), or how to go on. */
type Hooked =
  | { refused: string; decision: 'blocked_by_hook' | 'invalid'; notes: string[] }
  | { allow: boolean; ask?: string; notes: string[] };

/**
 * Runs the call's PreToolUse hooks. A block or a deny refuses it; `updatedInput` replaces its
 * arguments (validated again, as if the model had sent them); allow and ask are weighed with the
 * permission check. The step's arguments are updated in place.
 */
async function preToolUse(step: Step, deps: ExecutionDeps): Promise<Hooked> {
  const prepared = step.prepared as Extract<PreparedCall, { ok: true }>;
  if (!deps.hooks?.guards(prepared.tool.name)) return { allow: false, notes: [] };
  const name = prepared.tool.name;
  const outcome = await deps.hooks.preToolUse(name, prepared.args, step.call.id, deps.ctx.signal);
  const { notes } = outcome;
  const refusal =
    outcome.block ?? (outcome.permission === 'deny' ? (outcome.permissionReason ?? 'denied') : undefined);
  if (refusal !== undefined)
    return { refused: `Blocked by a hook: ${refusal}`, decision: 'blocked_by_hook', notes };
  if (outcome.updatedInput) {
    const args = fromClaudeToolInput(name, outcome.updatedInput, deps.ctx.workspace);
    const again = deps.tools.prepare({ ...step.call, arguments: JSON.stringify(args) });
    if (!again.ok)
      return {
        refused: `A hook changed the arguments, and they are invalid: ${again.error}`,
        decision: 'invalid',
        notes,
      };
    step.prepared = again;
  }
  const ask =
    outcome.permission === 'ask'
      ? (outcome.permissionReason ?? 'a PreToolUse hook asks for your answer')
      : undefined;
  return { allow: outcome.permission === 'allow', ...(ask ? { ask } : {}), notes };
}

/** A call that may run right away and alongside others: valid, read-only, allowed and with no hook before it. */
async function runsFreely(step: Step, deps: ExecutionDeps): Promise<boolean> {
  if (!step.prepared.ok || step.prepared.tool.mutates || deps.ctx.signal.aborted) return false;
  if (deps.hooks?.guards(step.prepared.tool.name)) return false;
  return (await deps.gate.check(step.prepared.tool, step.prepared.args, deps.ctx.durable)).action === 'allow';
}

async function run(
  step: Step,
  deps: ExecutionDeps,
  channel: ProgressChannel,
  notes: string[],
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
  if (deps.hooks) {
    // PostToolUse: the call has run; what a hook says is feedback the model reads with the result.
    const post = await deps.hooks.postToolUse(
      prepared.tool.name,
      prepared.args,
      result,
      step.call.id,
      deps.ctx.signal,
    );
    notes.push(...post.notes);
    const said = [post.block, ...post.context].filter((text): text is string => Boolean(text));
    if (said.length > 0) result.output = `${result.output}\n\n[PostToolUse hook]\n${said.join('\n')}`;
  }
  const attached = result.meta?.attachments;
  if (Array.isArray(attached) && attached.length > 0) {
    const { images, failures } = await fitImages(attached as ImagePart[]);
    for (const failure of failures) result.output += `\n[the image was not sent: ${failure}]`;
    if (images.length > 0) deps.onImages?.(step.call.id, images);
  }
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
