import { z } from 'zod';

/**
 * The `hooks` setting, in Claude Code's shape so that a user's existing settings carry over
 * unchanged (https://code.claude.com/docs/en/hooks):
 *
 *   "hooks": { "PreToolUse": [ { "matcher": "Bash|Edit", "hooks": [ { "type": "command",
 *              "command": "~/.claude/hooks/guard.sh", "timeout": 30 } ] } ] }
 *
 * Only command hooks exist in Hearth; Claude Code's other handler types are refused with a clear
 * message rather than skipped. Keys Claude Code has and Hearth does not use (`statusMessage`,
 * `async`, ...) are accepted and ignored, so a copied block loads. `on_failure` is Hearth's own: a
 * PreToolUse hook that crashes or times out blocks the call unless it says `"continue"`.
 */
export const HOOK_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'UserPromptSubmit',
  'SessionStart',
  'Stop',
  'SubagentStop',
  'PreCompact',
  'Notification',
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** Seconds a hook may run when it does not say; Claude Code's default. */
export const DEFAULT_HOOK_TIMEOUT_S = 60;

const commandHook = z.looseObject({
  type: z.literal('command', {
    error:
      'only "command" hooks are supported (Claude Code\'s http, prompt, agent and mcp_tool hooks are not)',
  }),
  command: z.string().min(1),
  /** Seconds. */
  timeout: z.number().positive().optional(),
  on_failure: z.enum(['block', 'continue']).optional(),
});

const matcherGroup = z
  .looseObject({
    /** A regular expression matched against the whole name (tool, start source, trigger); empty or `*`: all. */
    matcher: z
      .string()
      .optional()
      .refine((m) => m === undefined || compilesAsRegex(m), { message: 'not a valid regular expression' }),
    hooks: z.array(commandHook),
  })
  .describe('One matcher and the commands it runs');

function compilesAsRegex(text: string): boolean {
  if (text === '' || text === '*') return true;
  try {
    new RegExp(text);
    return true;
  } catch {
    return false;
  }
}

export const hooksSchema = z
  .object(Object.fromEntries(HOOK_EVENTS.map((event) => [event, z.array(matcherGroup).optional()])))
  .strict() as z.ZodType<HooksSettings>;

export type CommandHook = z.infer<typeof commandHook>;
export type MatcherGroup = z.infer<typeof matcherGroup>;
export type HooksSettings = Partial<Record<HookEvent, MatcherGroup[]>>;
