import type { SessionHooks } from '../hooks/hooks.js';
import { fitImages } from '../llm/image-fit.js';
import type { ImagePart, ToolCall } from '../llm/types.js';
import type { ApprovalAnswer, Approver, PermissionGate } from '../permissions/gate.js';
import type { AuditEntry } from '../store/rows.js';
import { fromClaudeToolInput } from '../tools/claude-names.js';
import type { PreparedCall, ToolRegistry } from '../tools/registry.js';
import type { ToolContext } from '../tools/types.js';
import { diagnosticsAfter, type EditCheckPort, warmReads, watchEdits } from './edit-check.js';
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
  /** Keeps a checkpoint of the workspace before a call that may change it; a note is said to the user. */
  beforeChange?: () => Promise<string | undefined>;
  /** Checks the files a mutating call changed (language servers' diagnostics); unset, none. */
  editCheck?: EditCheckPort;
}

/** Events of one turn's tool calls, then the calls left waiting (empty unless paused). */
export type ExecutionEvent =
  | Extract<AgentEvent, { type: 'tool_call' | 'approval_request' | 'tool_progress' | 'warning' }>
  | ToolResultEvent
  | SubagentEvent;

const SKIPPED_FOR_STEERING =
  'Not run: the user sent a new message before this call started. Read it, then decide what to call.';
/** What the model reads for a call a hook's `continue: false` left unrun; the reason is the user's. */
const HOOK_STOPPED = 'Not run: a hook ended the run here, and the user was told why.';

type Step = { call: ToolCall; prepared: PreparedCall };

/** How a turn's calls ended. */
export interface ExecutionEnd {
  /** The calls waiting for approval when nobody could be asked (the run then pauses); else empty. */
  pending: ToolCall[];
  /** A call of a tool that `ends` the run succeeded. */
  ended?: boolean;
  /** A hook said `continue: false`: why the run stops, for the user only. */
  stopped?: string;
}

/** What hooks said for the user while calls ran: notes, and the first `continue: false`. */
interface Heard {
  notes: string[];
  stop?: string;
}

/** What one turn's calls share while they run. */
interface Turn {
  progress: ProgressChannel;
  /** Yielded before the results. */
  heard: Heard;
  /** A call of a tool that ends the run succeeded: later calls do not run. */
  ended: boolean;
}

/**
 * Runs one turn's calls. Consecutive read-only calls that need no answer run concurrently; any
 * other call runs alone, in order. Results come out in call order. Returns the calls still
 * waiting for approval when nobody could be asked (the run then pauses).
 */
export async function* executeCalls(
  calls: ToolCall[],
  deps: ExecutionDeps,
): AsyncGenerator<ExecutionEvent, ExecutionEnd> {
  const steps: Step[] = calls.map((call) => ({ call, prepared: deps.tools.prepare(call) }));
  const turn: Turn = { progress: new ProgressChannel(), heard: { notes: [] }, ended: false };
  let i = 0;
  while (i < steps.length) {
    const skip = skipReason(steps, i, turn, deps);
    if (skip !== undefined) {
      for (const step of steps.slice(i)) {
        yield announce(step, deps);
        yield finish(step, deps, 'skipped', { ok: false, output: skip });
      }
      break;
    }
    const batch: Step[] = [];
    while (i < steps.length && (await runsFreely(steps[i]!, deps))) batch.push(steps[i++]!);
    if (batch.length > 0) {
      for (const step of batch) yield announce(step, deps);
      const results = yield* withProgress(
        turn.progress,
        Promise.all(batch.map((step) => run(step, deps, turn, 'allowed', undefined))),
      );
      yield* warnings(turn.heard);
      for (const result of results) yield result;
      continue;
    }
    if ((yield* runAlone(steps[i]!, deps, turn)) === 'pending') {
      return { pending: steps.slice(i).map((s) => s.call) };
    }
    i++;
  }
  const { heard, ended } = turn;
  return { pending: [], ...(ended ? { ended } : {}), ...(heard.stop ? { stopped: heard.stop } : {}) };
}

/** Why the calls from `i` on do not run, if they do not. */
function skipReason(steps: Step[], i: number, turn: Turn, deps: ExecutionDeps): string | undefined {
  if (turn.heard.stop !== undefined) return HOOK_STOPPED;
  if (turn.ended) return `Not run: ${steps[i - 1]!.call.name} ended your turn before this call.`;
  return i > 0 && deps.steered?.() ? SKIPPED_FOR_STEERING : undefined;
}

function* warnings(heard: Heard): Generator<ExecutionEvent> {
  for (const message of heard.notes.splice(0)) yield { type: 'warning', message };
}

/**
 * One call that may not simply run alongside others: its hooks, the permission check and, when it
 * needs an answer, the question. 'pending' when nobody could be asked (the run pauses).
 */
async function* runAlone(
  step: Step,
  deps: ExecutionDeps,
  turn: Turn,
): AsyncGenerator<ExecutionEvent, 'pending' | undefined> {
  yield announce(step, deps);
  if (!step.prepared.ok) {
    yield finish(step, deps, 'invalid', { ok: false, output: step.prepared.error });
    return undefined;
  }
  if (deps.ctx.signal.aborted) {
    yield finish(step, deps, 'cancelled', { ok: false, output: 'Cancelled by the user before it ran.' });
    return undefined;
  }
  const { heard } = turn;
  const hooked = await preToolUse(step, deps);
  heard.notes.push(...hooked.notes);
  heard.stop ??= hooked.stop;
  yield* warnings(heard);
  if ('refused' in hooked) {
    yield finish(step, deps, hooked.decision, { ok: false, output: hooked.refused });
    return undefined;
  }
  const { tool, args } = step.prepared;
  let verdict = await deps.gate.check(tool, args, deps.ctx.durable, { preapproved: hooked.allow });
  if (verdict.action === 'allow' && hooked.ask !== undefined) verdict = { action: 'ask', reason: hooked.ask };
  if (verdict.action === 'deny') {
    yield finish(step, deps, 'denied', { ok: false, output: verdict.reason }, verdict.rule);
    return undefined;
  }
  if (verdict.action === 'allow') {
    yield* runAndReport(step, deps, turn, 'allowed', verdict.rule);
    return undefined;
  }
  const answer = deps.answers?.get(step.call.id) ?? (yield* ask(step, verdict, deps, turn));
  if (answer === 'pending' || answer === 'stopped') return answer === 'pending' ? answer : undefined;
  if (answer.decision === 'deny') {
    yield finish(step, deps, 'declined', {
      ok: false,
      output: `Not run: ${answer.reason ?? 'the user said no'}. Do not retry it unchanged; adjust, or ask the user.`,
    });
    return undefined;
  }
  const rule =
    answer.decision === 'always'
      ? (await deps.gate.remember(tool, args, deps.ctx.durable)).join(', ')
      : undefined;
  yield* runAndReport(step, deps, turn, answer.decision === 'always' ? 'approved_always' : 'approved', rule);
  return undefined;
}

async function* runAndReport(
  step: Step,
  deps: ExecutionDeps,
  turn: Turn,
  decision: string,
  rule: string | undefined,
): AsyncGenerator<ExecutionEvent> {
  const result = yield* withProgress(turn.progress, run(step, deps, turn, decision, rule));
  turn.ended = endsRun(step, result);
  yield result;
  yield* warnings(turn.heard);
}

/**
 * Asks about a call: a Notification hook first, then the approver. 'pending' when there is nobody
 * to ask; 'stopped' when a Notification hook ended the run (the call is answered here).
 */
async function* ask(
  step: Step,
  verdict: { reason: string; secret?: boolean; personOnly?: boolean },
  deps: ExecutionDeps,
  turn: Turn,
): AsyncGenerator<ExecutionEvent, ApprovalAnswer | 'pending' | 'stopped'> {
  if (!deps.approve) return 'pending';
  const { tool, args, unwrapped } = step.prepared as Extract<PreparedCall, { ok: true }>;
  const preview = await tool.preview?.(args, { workspace: deps.ctx.workspace }).catch(() => undefined);
  const request = {
    call: step.call,
    ...(unwrapped ? { unwrapped } : {}),
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
  turn.heard.notes.push(...(notified?.notes ?? []));
  yield* warnings(turn.heard);
  if (notified?.stop) {
    // `continue: false` from a Notification hook: nobody is asked, and the run ends here.
    turn.heard.stop = `A Notification hook stopped the run: ${notified.stop}`;
    yield finish(step, deps, 'blocked_by_hook', { ok: false, output: HOOK_STOPPED });
    return 'stopped';
  }
  yield { type: 'approval_request', ...request };
  return deps
    .approve(request, deps.ctx.signal)
    .catch((): ApprovalAnswer => ({ decision: 'deny', reason: 'the approval prompt failed' }));
}

/** True when the call was of a tool that ends the run, and it succeeded. */
function endsRun(step: Step, result: ToolResultEvent): boolean {
  return step.prepared.ok && step.prepared.tool.ends === true && result.ok;
}

/** The tool_call event, with the call in one line as the tool's declaration words it. */
function announce(step: Step, deps: ExecutionDeps): Extract<ExecutionEvent, { type: 'tool_call' }> {
  const { prepared } = step;
  return {
    type: 'tool_call',
    call: step.call,
    ...(prepared.ok ? { label: deps.gate.label(prepared.tool, prepared.args) } : {}),
    ...(prepared.unwrapped ? { unwrapped: prepared.unwrapped } : {}),
  };
}

/** The tool a call runs (the one a `use_tool` call names), as people and the audit see it. */
function toolName(step: Step): string {
  return step.prepared.ok ? step.prepared.tool.name : (step.prepared.unwrapped?.name ?? step.call.name);
}

/**
 * What the PreToolUse hooks made of a call: refused (with the result the model gets), or how to go
 * on; `stop`: a hook said `continue: false` (the call is refused and the run ends after it).
 */
type Hooked =
  | { refused: string; decision: 'blocked_by_hook' | 'invalid'; notes: string[]; stop?: string }
  | { allow: boolean; ask?: string; notes: string[]; stop?: undefined };

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
  if (outcome.stop)
    return {
      refused: HOOK_STOPPED,
      decision: 'blocked_by_hook',
      notes,
      stop: `A PreToolUse hook stopped the run: ${outcome.stop}`,
    };
  const refusal =
    outcome.block ?? (outcome.permission === 'deny' ? (outcome.permissionReason ?? 'denied') : undefined);
  if (refusal !== undefined)
    return { refused: `Blocked by a hook: ${refusal}`, decision: 'blocked_by_hook', notes };
  if (outcome.updatedInput) {
    const args = fromClaudeToolInput(name, outcome.updatedInput, deps.ctx.workspace);
    // By the real tool's name: a `use_tool` call's own arguments are the wrapper's.
    const again = deps.tools.prepare({ ...step.call, name, arguments: JSON.stringify(args) });
    if (!again.ok)
      return {
        refused: `A hook changed the arguments, and they are invalid: ${again.error}`,
        decision: 'invalid',
        notes,
      };
    step.prepared = { ...again, ...(step.prepared.unwrapped ? { unwrapped: step.prepared.unwrapped } : {}) };
  }
  const ask =
    outcome.permission === 'ask'
      ? (outcome.permissionReason ?? 'a PreToolUse hook asks for your answer')
      : undefined;
  return { allow: outcome.permission === 'allow', ...(ask ? { ask } : {}), notes };
}

/**
 * A call that may run right away and alongside others: valid, read-only, not ending the run,
 * allowed and with no hook before it.
 */
async function runsFreely(step: Step, deps: ExecutionDeps): Promise<boolean> {
  const { prepared } = step;
  if (!prepared.ok || prepared.tool.mutates || prepared.tool.ends || deps.ctx.signal.aborted) return false;
  if (deps.hooks?.guards(prepared.tool.name)) return false;
  return (await deps.gate.check(prepared.tool, prepared.args, deps.ctx.durable)).action === 'allow';
}

async function run(
  step: Step,
  deps: ExecutionDeps,
  turn: Turn,
  decision: string,
  rule: string | undefined,
): Promise<ToolResultEvent> {
  const prepared = step.prepared as Extract<PreparedCall, { ok: true }>;
  let finished = false;
  const { progress: channel, heard } = turn;
  const progress = channel.reporter(step.call.id, prepared.tool.name, () => finished);
  const leavesOut = deps.gate.secretFilter(prepared.tool.name, deps.ctx.durable);
  if (prepared.tool.mutates && deps.beforeChange) {
    const note = await deps.beforeChange();
    if (note !== undefined) heard.notes.push(note);
  }
  const watch = prepared.tool.mutates ? await watchEdits(deps.editCheck, prepared) : undefined;
  if (!prepared.tool.mutates) warmReads(deps.editCheck, prepared);
  const result = await deps.tools.run(prepared, {
    ...deps.ctx,
    progress,
    leavesOut: (file) => leavesOut(file),
    callId: step.call.id,
    relay: (event) => channel.relay(event),
  });
  finished = true;
  const diagnostics = await diagnosticsAfter(deps.editCheck, watch, result.ok);
  if (diagnostics !== undefined) result.output = `${result.output}\n\n${diagnostics}`;
  if (deps.hooks) {
    // PostToolUse: the call has run; what a hook says is feedback the model reads with the result.
    const post = await deps.hooks.postToolUse(
      prepared.tool.name,
      prepared.args,
      result,
      step.call.id,
      deps.ctx.signal,
    );
    heard.notes.push(...post.notes);
    // `continue: false`: the call has run and keeps its result; the run ends after this turn's calls.
    if (post.stop) heard.stop ??= `A PostToolUse hook stopped the run: ${post.stop}`;
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
  const code = typeof exitCode === 'number' ? exitCode : undefined;
  return finish(step, deps, decision, { ...result, diagnostics }, rule, code);
}

function finish(
  step: Step,
  deps: ExecutionDeps,
  decision: string,
  result: { ok: boolean; output: string; display?: string; diagnostics?: string; ms?: number },
  rule?: string,
  exitCode?: number,
): ToolResultEvent {
  deps.onAudit?.({
    // The real tool, also when it was called through use_tool.
    tool: toolName(step),
    arguments: step.call.arguments,
    decision,
    rule,
    durationMs: result.ms,
    exitCode,
  });
  return {
    type: 'tool_result',
    callId: step.call.id,
    name: toolName(step),
    ok: result.ok,
    output: result.output,
    display: result.display,
    ...(result.diagnostics === undefined ? {} : { diagnostics: result.diagnostics }),
    ms: result.ms ?? 0,
  };
}
