import type { HookEvent } from '../config/hooks-schema.js';
import type { HookRun } from './run-hook.js';

/**
 * What the hooks of one event decided, merged. The contract is Claude Code's
 * (https://code.claude.com/docs/en/hooks, "Hook output"): exit 0 is success, and its stdout may be
 * JSON with `continue`, `stopReason`, `systemMessage`, `decision`/`reason` and `hookSpecificOutput`
 * (`permissionDecision`, `permissionDecisionReason`, `updatedInput`, `additionalContext`); plain
 * stdout is context for UserPromptSubmit and SessionStart; exit 2 blocks, with stderr as the
 * reason; any other exit is a non-blocking error shown to the user. The common fields hold on every
 * event: `continue: false` (`stop`) ends the run after the hook and wins over a block, its
 * `stopReason` for the user only (the loop, tool execution and the session apply it); a
 * `systemMessage` is a note for the user; `suppressOutput` needs nothing, as Hearth never shows a
 * hook's stdout.
 *
 * One difference, on purpose: a PreToolUse hook that fails (an exit other than 0 and 2, a crash, a
 * timeout) blocks the call unless the hook says `"on_failure": "continue"`. A guard that broke
 * must not wave calls through; Claude Code lets them pass.
 */
export interface HookOutcome {
  /** Why the action was blocked: told to the model (to the user, for UserPromptSubmit). */
  block?: string;
  /** PreToolUse: the strongest decision any hook gave (deny over ask over allow). */
  permission?: 'allow' | 'deny' | 'ask';
  permissionReason?: string;
  /** PreToolUse: the tool input to use instead, in Claude Code's shape. */
  updatedInput?: Record<string, unknown>;
  /** Text added for the model. */
  context: string[];
  /** `continue: false`: the run stops after this, with this reason for the user. */
  stop?: string;
  /** For the user: failures, non-blocking errors, `systemMessage`s. */
  notes: string[];
}

/** Events where exit 2 or `decision: "block"` stops something; elsewhere stderr only informs the user. */
const BLOCKING: ReadonlySet<HookEvent> = new Set([
  'PreToolUse',
  'PostToolUse',
  'UserPromptSubmit',
  'Stop',
  'SubagentStop',
]);
/** Events whose plain stdout (exit 0) goes to the model as context. */
const STDOUT_IS_CONTEXT: ReadonlySet<HookEvent> = new Set(['UserPromptSubmit', 'SessionStart']);
const RANK = { allow: 1, ask: 2, deny: 3 } as const;
const MAX_NOTE_CHARS = 300;

export function emptyOutcome(): HookOutcome {
  return { context: [], notes: [] };
}

/** Reads one hook's run; `failClosed` makes a failed PreToolUse hook block. */
export function readHookRun(event: HookEvent, run: HookRun, failClosed: boolean): HookOutcome {
  const outcome = emptyOutcome();
  const name = `${event} hook \`${clip(run.command)}\``;
  const failed =
    run.failure ?? (run.exitCode !== 0 && run.exitCode !== 2 ? `exited with ${run.exitCode}` : undefined);
  if (failed !== undefined) {
    const detail = firstLines(run.stderr);
    outcome.notes.push(`${name} ${failed}${detail ? `: ${detail}` : ''}`);
    if (event === 'PreToolUse' && failClosed) {
      outcome.block = `A PreToolUse hook failed (${failed}), so the call was not run. Tell the user; do not retry it unchanged.`;
    }
    return outcome;
  }
  if (run.exitCode === 2) {
    const reason = run.stderr.trim() || `blocked by ${name}`;
    if (BLOCKING.has(event)) outcome.block = reason;
    else outcome.notes.push(`${name}: ${firstLines(reason)}`);
    return outcome;
  }
  const json = parseObject(run.stdout);
  if (!json) {
    const text = run.stdout.trim();
    if (text && STDOUT_IS_CONTEXT.has(event)) outcome.context.push(text);
    return outcome;
  }
  if (json.continue === false) outcome.stop = stringOr(json.stopReason, `stopped by ${name}`);
  if (typeof json.systemMessage === 'string' && json.systemMessage.trim())
    outcome.notes.push(json.systemMessage.trim());
  const specific = isObject(json.hookSpecificOutput) ? json.hookSpecificOutput : {};
  const reason = stringOr(json.reason, '');
  if (event === 'PreToolUse') {
    // `decision: approve|block` is the older spelling of permissionDecision allow|deny.
    const legacy = json.decision === 'approve' ? 'allow' : json.decision === 'block' ? 'deny' : undefined;
    const decision = specific.permissionDecision ?? legacy;
    if (decision === 'allow' || decision === 'deny' || decision === 'ask') {
      outcome.permission = decision;
      outcome.permissionReason = stringOr(specific.permissionDecisionReason, reason) || undefined;
    }
    const updated = specific.updatedInput ?? json.updatedInput;
    if (isObject(updated)) outcome.updatedInput = updated;
  } else if (json.decision === 'block' && BLOCKING.has(event)) {
    outcome.block = reason || `blocked by ${name}`;
  }
  if (typeof specific.additionalContext === 'string' && specific.additionalContext.trim())
    outcome.context.push(specific.additionalContext.trim());
  return outcome;
}

/** Several hooks of one event, run together, as one outcome. */
export function mergeOutcomes(outcomes: HookOutcome[]): HookOutcome {
  const merged = emptyOutcome();
  const blocks: string[] = [];
  for (const o of outcomes) {
    if (o.block) blocks.push(o.block);
    if (o.permission && (!merged.permission || RANK[o.permission] > RANK[merged.permission])) {
      merged.permission = o.permission;
      merged.permissionReason = o.permissionReason;
    }
    if (o.updatedInput) merged.updatedInput = o.updatedInput;
    if (o.stop && !merged.stop) merged.stop = o.stop;
    merged.context.push(...o.context);
    merged.notes.push(...o.notes);
  }
  if (blocks.length > 0) merged.block = blocks.join('\n');
  return merged;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(trimmed) as unknown;
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' && value.trim() ? value.trim() : fallback;
}

function firstLines(text: string): string {
  return clip(text.trim().split('\n').slice(0, 3).join(' | '));
}

function clip(text: string): string {
  return text.length > MAX_NOTE_CHARS ? `${text.slice(0, MAX_NOTE_CHARS)}…` : text;
}
