import { realpath } from 'node:fs/promises';
import type { ToolCall } from '../llm/types.js';
import type { AnyTool, SessionState } from '../tools/types.js';
import {
  alwaysRules,
  type CallSubject,
  callSubject,
  decide,
  describeCall,
  exactRules,
  leavesOutSecret,
  type Verdict,
} from './decide.js';
import type { PermissionMode } from './modes.js';
import { parseRule, type Rule } from './rules.js';
import { declaredPaths, labelCall } from './subjects.js';
import { resolveTargets } from './targets.js';

/** The user's answer to an approval request. */
export interface ApprovalAnswer {
  decision: 'once' | 'always' | 'deny';
  /** With `deny`: passed on to the model. */
  reason?: string;
}

export interface ApprovalRequest {
  call: ToolCall;
  /** The tool the call runs and its arguments, when the model called it through `use_tool`. */
  unwrapped?: { name: string; arguments: string };
  /** One readable line: the command, or the tool and its path. */
  summary: string;
  /** Why the call needs an answer. */
  reason: string;
  /** What the call would change (a diff), when the tool can tell beforehand. */
  preview?: string;
  /** `--allow` rules that would let exactly this call run without asking. */
  allowRules?: string[];
  /** The call touches files that may hold secrets: no permission mode pre-approves it, only a rule naming them. */
  secret?: boolean;
  /** No mode and no rule pre-approves it, only a person's answer (a shell line a deny rule cannot see through). */
  personOnly?: boolean;
  /** The sub-agent that made the call, by name, so the person knows who asks. */
  agent?: string;
}

/** Asks someone (a person at a terminal, a UI, a library callback) about one call. */
export type Approver = (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalAnswer>;

const ALWAYS_KEY = 'permissions.always';

/**
 * Decides each call from the mode, the configured rules and the "always" answers given in this
 * session (kept in the session state, so a resumed session remembers them). Paths a call declares
 * are decided on their name and on the file they really lead to (targets.ts).
 */
export class PermissionGate {
  private root: Promise<string> | undefined;
  /** One resolution per validated call, shared by its check, question and "always" answer. */
  private readonly subjects = new WeakMap<object, Promise<CallSubject>>();
  /** Why commands need an answer whatever the mode; set when they would run with no sandbox. */
  private commandsAsk: string | undefined;

  constructor(
    public mode: PermissionMode,
    private readonly rules: { allow: Rule[]; deny: Rule[] },
    private readonly workspace: string,
  ) {}

  /**
   * Makes every call that declares a command need the user's answer (`reason`), whatever the mode
   * and the configured allow rules; only "always" answers given in this session still cover one.
   * The sandbox choice sets it when no sandbox could be had; undefined lifts it.
   */
  commandsNeedApproval(reason: string | undefined): void {
    this.commandsAsk = reason;
  }

  /**
   * The same rules and the same sandbox restriction in another mode, for a sub-agent held to a
   * stricter one. The caller checks that it is stricter (modes.ts `atLeastAsStrict`).
   */
  withMode(mode: PermissionMode): PermissionGate {
    const gate = new PermissionGate(mode, this.rules, this.workspace);
    gate.commandsAsk = this.commandsAsk;
    return gate;
  }

  /** The same rules, mode and sandbox restriction over another workspace (a sub-agent's worktree). */
  forWorkspace(workspace: string): PermissionGate {
    const gate = new PermissionGate(this.mode, this.rules, workspace);
    gate.commandsAsk = this.commandsAsk;
    return gate;
  }

  /** Gives a new session (a sub-agent's) the "always" answers given so far in another (its parent). */
  carryAnswers(from: SessionState, to: SessionState): void {
    const given = from.get(ALWAYS_KEY);
    if (Array.isArray(given) && given.length > 0) to.set(ALWAYS_KEY, given);
  }

  /**
   * `preapproved`: something the user configured (a PreToolUse hook) allowed this call, which then
   * runs as an allow rule would let it: deny rules, plan mode, secrets, lines no rule can see
   * through and commands without a sandbox still stop it.
   */
  async check(
    tool: AnyTool,
    args: unknown,
    state: SessionState,
    options: { preapproved?: boolean } = {},
  ): Promise<Verdict> {
    const subject = await this.subject(tool, args);
    const verdict = decide(subject, {
      mode: options.preapproved && this.mode !== 'plan' ? 'auto' : this.mode,
      allow: [...this.rules.allow, ...this.sessionRules(state)],
      deny: this.rules.deny,
    });
    if (verdict.action === 'deny' || this.commandsAsk === undefined || subject.touches.command === undefined)
      return verdict;
    const answered = decide(subject, { mode: 'manual', allow: this.sessionRules(state), deny: [] });
    return answered.action === 'allow' ? answered : { action: 'ask', reason: this.commandsAsk };
  }

  /** Records an "always" answer; returns the rules added, for the audit trail. */
  async remember(tool: AnyTool, args: unknown, state: SessionState): Promise<string[]> {
    const added = alwaysRules(await this.subject(tool, args)).map((rule) => rule.text);
    const known = (state.get(ALWAYS_KEY) as string[] | undefined) ?? [];
    state.set(ALWAYS_KEY, [...new Set([...known, ...added])]);
    return added;
  }

  /**
   * The call in one line for an approval question: the exact command, or the tool and what it
   * touches, with where a symlink really leads (`read_file alias.txt → .env`).
   */
  async summary(tool: AnyTool, args: unknown): Promise<string> {
    return describeCall(await this.subject(tool, args));
  }

  /**
   * `--allow` rules that would let exactly this call run without asking: for a symlink, rules for
   * the name and for the file it leads to.
   */
  async allowRules(tool: AnyTool, args: unknown): Promise<string[]> {
    return exactRules(await this.subject(tool, args));
  }

  /**
   * For a tool that reads many files in one call (a search): a test saying which files it must
   * leave out, true for a workspace-relative path (or the real path it leads to) that looks like
   * a secret and that no allow rule for the tool names, "always" answers of this session included.
   */
  secretFilter(tool: string, state: SessionState): (file: string, real?: string) => boolean {
    const allow = [...this.rules.allow, ...this.sessionRules(state)];
    return (file, real) => leavesOutSecret(allow, tool, file, real);
  }

  /** The call in one line for a tool row: `shell npm test`, `write_file src/a.ts`, as the call names it. */
  label(tool: AnyTool, args: unknown): string {
    return labelCall(callSubject(tool, args, this.workspace));
  }

  private sessionRules(state: SessionState): Rule[] {
    const texts = state.get(ALWAYS_KEY);
    return Array.isArray(texts) ? texts.map((text) => parseRule(String(text))) : [];
  }

  private subject(tool: AnyTool, args: unknown): Promise<CallSubject> {
    if (!args || typeof args !== 'object') return this.resolve(tool, args);
    let subject = this.subjects.get(args);
    if (!subject) {
      subject = this.resolve(tool, args);
      this.subjects.set(args, subject);
    }
    return subject;
  }

  private async resolve(tool: AnyTool, args: unknown): Promise<CallSubject> {
    const plain = callSubject(tool, args, this.workspace);
    const paths = declaredPaths(plain.touches);
    if (paths.length === 0) return plain;
    this.root ??= realpath(this.workspace).catch(() => this.workspace);
    const targets = await resolveTargets(paths, this.workspace, await this.root);
    return callSubject(tool, args, this.workspace, targets);
  }
}
