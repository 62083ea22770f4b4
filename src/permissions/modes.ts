/**
 * How much runs without asking:
 * - `auto`: everything runs (deny rules and secret files still apply);
 * - `normal`: read-only tools run; tools that change things, the shell among them, ask;
 * - `manual`: every call asks;
 * - `plan`: read-only tools run; tools that change things are refused, and the model is told to
 *   present its plan instead.
 */
export type PermissionMode = 'auto' | 'normal' | 'manual' | 'plan';

export const PERMISSION_MODES: readonly PermissionMode[] = ['auto', 'normal', 'manual', 'plan'];

/** What people type, coming from other agents: `yolo` is Hearth's `auto`. */
export function permissionModeNamed(name: string): PermissionMode | undefined {
  const wanted = name.trim().toLowerCase();
  if (wanted === 'yolo') return 'auto';
  return isPermissionMode(wanted) ? wanted : undefined;
}

function isPermissionMode(value: unknown): value is PermissionMode {
  return typeof value === 'string' && (PERMISSION_MODES as readonly string[]).includes(value);
}

/**
 * True when `mode` lets nothing run unasked that `than` would ask about or refuse, and refuses
 * whatever `than` refuses: a sub-agent may be held to it. `manual` and `plan` are not comparable
 * (plan runs reads unasked, manual lets changes run once asked), so neither holds the other.
 */
export function atLeastAsStrict(mode: PermissionMode, than: PermissionMode): boolean {
  if (mode === than || than === 'auto') return true;
  return than === 'normal' && (mode === 'manual' || mode === 'plan');
}

/** What a mode does with a call no rule decided: run it, or ask why. */
export function modeDefault(
  mode: PermissionMode,
  tool: string,
  mutates: boolean,
  runsCommand: boolean,
): { action: 'allow' } | { action: 'ask'; reason: string } {
  if (mode === 'manual') return { action: 'ask', reason: 'manual mode asks before every tool call' };
  if (mode === 'normal' && mutates) {
    const what = runsCommand ? `${tool} runs commands` : `${tool} changes things`;
    return { action: 'ask', reason: `${what}; normal mode asks before it runs` };
  }
  return { action: 'allow' };
}

/** The refusal a plan-mode session gives the model for a tool that would change something. */
export function planModeRefusal(tool: string): string {
  return `Plan mode: ${tool} was not run. Do not change anything yet; present your plan to the user as text instead.`;
}
