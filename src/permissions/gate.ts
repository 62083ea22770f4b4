import type { ToolCall } from '../llm/types.js';
import type { AnyTool, SessionState } from '../tools/types.js';
import {
  alwaysRules,
  type CallSubject,
  callSubject,
  decide,
  describeCall,
  exactRules,
  type Verdict,
} from './decide.js';
import type { PermissionMode } from './modes.js';
import { parseRule, type Rule } from './rules.js';
import { labelCall } from './subjects.js';

/** The user's answer to an approval request. */
export interface ApprovalAnswer {
  decision: 'once' | 'always' | 'deny';
  /** With `deny`: passed on to the model. */
  reason?: string;
}

export interface ApprovalRequest {
  call: ToolCall;
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
}

/** Asks someone (a person at a terminal, a UI, a library callback) about one call. */
export type Approver = (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalAnswer>;

const ALWAYS_KEY = 'permissions.always';

/**
 * Decides each call from the mode, the configured rules and the "always" answers given in this
 * session (kept in the session state, so a resumed session remembers them).
 */
export class PermissionGate {
  constructor(
    public mode: PermissionMode,
    private readonly rules: { allow: Rule[]; deny: Rule[] },
    private readonly workspace: string,
  ) {}

  check(tool: AnyTool, args: unknown, state: SessionState): Verdict {
    return decide(this.subject(tool, args), {
      mode: this.mode,
      allow: [...this.rules.allow, ...this.sessionRules(state)],
      deny: this.rules.deny,
    });
  }

  /** Records an "always" answer; returns the rules added, for the audit trail. */
  remember(tool: AnyTool, args: unknown, state: SessionState): string[] {
    const added = alwaysRules(this.subject(tool, args)).map((rule) => rule.text);
    const known = (state.get(ALWAYS_KEY) as string[] | undefined) ?? [];
    state.set(ALWAYS_KEY, [...new Set([...known, ...added])]);
    return added;
  }

  /** The call in one line for an approval question: the exact command, or the tool and what it touches. */
  summary(tool: AnyTool, args: unknown): string {
    return describeCall(this.subject(tool, args));
  }

  /** `--allow` rules that would let exactly this call run without asking. */
  allowRules(tool: AnyTool, args: unknown): string[] {
    return exactRules(this.subject(tool, args));
  }

  /** The call in one line for a tool row: `shell npm test`, `write_file src/a.ts`. */
  label(tool: AnyTool, args: unknown): string {
    return labelCall(this.subject(tool, args));
  }

  private sessionRules(state: SessionState): Rule[] {
    const texts = state.get(ALWAYS_KEY);
    return Array.isArray(texts) ? texts.map((text) => parseRule(String(text))) : [];
  }

  private subject(tool: AnyTool, args: unknown): CallSubject {
    return callSubject(tool, args, this.workspace);
  }
}
