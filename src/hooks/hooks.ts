import path from 'node:path';
import { filesNamedBy, hashFiles, hookFiles } from '../config/hook-files.js';
import {
  type CommandHook,
  DEFAULT_HOOK_TIMEOUT_S,
  type HookEvent,
  type HooksSettings,
} from '../config/hooks-schema.js';
import type { PermissionMode } from '../permissions/modes.js';
import { claudeToolInput, claudeToolName } from '../tools/claude-names.js';
import type { Clock } from '../util/clock.js';
import { emptyOutcome, type HookOutcome, mergeOutcomes, readHookRun } from './outcome.js';
import { type HookRun, runHookCommand } from './run-hook.js';

export type { HookOutcome } from './outcome.js';

/** Where hooks run and what they are given besides the event. */
export interface HooksEnvironment {
  workspace: string;
  /** The user's environment, which hook programs get (plus CLAUDE_PROJECT_DIR); default this process's. */
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  /**
   * The content (hash, or `absent`) of each workspace file a hook command names, as it was when the
   * session's settings were read; a hook whose files differ at run time is not run. `Hooks.create`
   * takes them.
   */
  pins?: Record<string, string>;
}

/** The session a hook fires in, as its stdin names it. */
export interface HookSession {
  id: string;
  /** Writes the conversation as a JSONL transcript and returns its path; only called when a hook runs. */
  transcript(): Promise<string>;
  permissionMode(): PermissionMode;
  /**
   * Set when the hooks fire in a sub-agent: its own session. `id` and `transcript` above are then
   * the session that started it, as Claude Code gives a sub-agent's hooks the main session's; its
   * end fires SubagentStop instead of Stop, and UserPromptSubmit (the user's prompts) never fires.
   */
  agent?: { id: string; transcript(): Promise<string> /** Its agent definition's name. */; type?: string };
}

/** The `agent_type` Claude Code gives its default sub-agent, which Hearth's unnamed ones stand for. */
const DEFAULT_AGENT_TYPE = 'general-purpose';

/** Events whose matcher is tested against something (Claude Code ignores it for the others). */
const MATCHED: ReadonlySet<HookEvent> = new Set([
  'PreToolUse',
  'PostToolUse',
  'SessionStart',
  'SubagentStop',
  'PreCompact',
  'Notification',
]);

/** Claude Code's names for the permission modes, which hook scripts compare against. */
const CLAUDE_MODES: Record<PermissionMode, string> = {
  normal: 'default',
  manual: 'default',
  auto: 'bypassPermissions',
  plan: 'plan',
};

/**
 * The configured hooks. They run on the host as the user's own programs, so they come only from
 * settings the workspace cannot write: the user's config, the environment, flags, or a project file
 * the user approved (`hooks` is a security setting, config/security.ts).
 */
export class Hooks {
  private readonly compiled: Array<{ event: HookEvent; matcher: RegExp | undefined; hooks: CommandHook[] }>;

  /** Hooks with their workspace files pinned as they are now. */
  static async create(settings: HooksSettings, environment: HooksEnvironment): Promise<Hooks> {
    const pins = await hashFiles(hookFiles(settings, environment.workspace));
    return new Hooks(settings, { ...environment, pins });
  }

  constructor(
    settings: HooksSettings,
    private readonly environment: HooksEnvironment,
  ) {
    this.compiled = Object.entries(settings).flatMap(([event, groups]) =>
      (groups ?? []).map((group) => ({
        event: event as HookEvent,
        matcher: compileMatcher(group.matcher),
        hooks: group.hooks,
      })),
    );
  }

  /** How many hook commands are configured, for `doctor` and `/status`. */
  get count(): number {
    return this.compiled.reduce((n, group) => n + group.hooks.length, 0);
  }

  /** The hooks an event with this subject (a tool's Claude Code name, a start source) runs; same commands once. */
  matching(event: HookEvent, subject?: string): CommandHook[] {
    const seen = new Set<string>();
    const found: CommandHook[] = [];
    for (const group of this.compiled) {
      if (group.event !== event) continue;
      if (MATCHED.has(event) && group.matcher && !group.matcher.test(subject ?? '')) continue;
      for (const hook of group.hooks) {
        if (seen.has(hook.command)) continue;
        seen.add(hook.command);
        found.push(hook);
      }
    }
    return found;
  }

  /** Runs the matching hooks together and merges what they said. No hooks: an empty outcome, at no cost. */
  async fire(
    event: HookEvent,
    subject: string | undefined,
    fields: Record<string, unknown>,
    session: HookSession,
    signal?: AbortSignal,
  ): Promise<HookOutcome> {
    const hooks = this.matching(event, subject);
    if (hooks.length === 0) return mergeOutcomes([]);
    const { workspace } = this.environment;
    const input = JSON.stringify({
      session_id: session.id,
      transcript_path: await session.transcript(),
      cwd: workspace,
      permission_mode: CLAUDE_MODES[session.permissionMode()],
      hook_event_name: event,
      ...fields,
    });
    const env = {
      ...(this.environment.env ?? process.env),
      CLAUDE_PROJECT_DIR: workspace,
      HEARTH_PROJECT_DIR: workspace,
    };
    const runs = await Promise.all(
      hooks.map(async (hook) => {
        const changed = await this.changedFiles(hook.command);
        const run: HookRun =
          changed.length > 0
            ? {
                command: hook.command,
                exitCode: null,
                stdout: '',
                stderr: '',
                failure: `was not run: ${changed.join(', ')} changed since the session began, and the agent's commands can write there`,
              }
            : await runHookCommand(hook.command, input, {
                cwd: workspace,
                env,
                timeoutMs: (hook.timeout ?? DEFAULT_HOOK_TIMEOUT_S) * 1000,
                signal,
                clock: this.environment.clock,
              });
        return readHookRun(event, run, hook.on_failure !== 'continue');
      }),
    );
    return mergeOutcomes(runs);
  }

  /** The workspace files the command names whose content is not what was pinned, workspace-relative. */
  private async changedFiles(command: string): Promise<string[]> {
    const { workspace, pins } = this.environment;
    if (!pins) return [];
    const named = filesNamedBy(command, workspace);
    const now = await hashFiles(named);
    return named.filter((file) => now[file] !== pins[file]).map((file) => path.relative(workspace, file));
  }

  /** The events of one session, each with the fields Claude Code sends for it. */
  forSession(session: HookSession): SessionHooks {
    return new SessionHooks(this, session, this.environment.workspace);
  }
}

/** A session's hooks: one method per event, shaping its stdin as Claude Code does. */
export class SessionHooks {
  constructor(
    private readonly hooks: Hooks,
    private readonly session: HookSession,
    private readonly workspace: string,
  ) {}

  /** True when a PreToolUse hook would run for this tool (the call then runs alone, after it). */
  guards(tool: string): boolean {
    return this.hooks.matching('PreToolUse', claudeToolName(tool)).length > 0;
  }

  preToolUse(tool: string, args: unknown, callId: string, signal?: AbortSignal): Promise<HookOutcome> {
    const name = claudeToolName(tool);
    return this.hooks.fire(
      'PreToolUse',
      name,
      { tool_name: name, tool_input: claudeToolInput(tool, args, this.workspace), tool_use_id: callId },
      this.session,
      signal,
    );
  }

  postToolUse(
    tool: string,
    args: unknown,
    result: { ok: boolean; output: string },
    callId: string,
    signal?: AbortSignal,
  ): Promise<HookOutcome> {
    const name = claudeToolName(tool);
    return this.hooks.fire(
      'PostToolUse',
      name,
      {
        tool_name: name,
        tool_input: claudeToolInput(tool, args, this.workspace),
        tool_response: { success: result.ok, output: result.output },
        tool_use_id: callId,
      },
      this.session,
      signal,
    );
  }

  userPromptSubmit(prompt: string, signal?: AbortSignal): Promise<HookOutcome> {
    // A sub-agent's task is its brief, written by its parent, not a prompt the user submitted.
    if (this.session.agent) return Promise.resolve(emptyOutcome());
    return this.hooks.fire('UserPromptSubmit', undefined, { prompt }, this.session, signal);
  }

  sessionStart(source: 'startup' | 'resume' | 'compact', signal?: AbortSignal): Promise<HookOutcome> {
    return this.hooks.fire('SessionStart', source, { source }, this.session, signal);
  }

  /**
   * The run is about to end with an answer, or a sub-agent's report (Stop; SubagentStop in a
   * sub-agent's session, matched on its agent type). `active`: it goes on because such a hook said
   * so last time (scripts check it to avoid loops). `last`: the final assistant text.
   */
  async stop(active: boolean, last: string, signal?: AbortSignal): Promise<HookOutcome> {
    const fields = { stop_hook_active: active, last_assistant_message: last };
    const { agent } = this.session;
    if (!agent) return this.hooks.fire('Stop', undefined, fields, this.session, signal);
    const type = agent.type ?? DEFAULT_AGENT_TYPE;
    // The sub-agent's own transcript is written only when a hook will read it.
    if (this.hooks.matching('SubagentStop', type).length === 0) return emptyOutcome();
    const about = { agent_id: agent.id, agent_type: type, agent_transcript_path: await agent.transcript() };
    return this.hooks.fire('SubagentStop', type, { ...fields, ...about }, this.session, signal);
  }

  preCompact(trigger: 'auto' | 'manual', signal?: AbortSignal): Promise<HookOutcome> {
    return this.hooks.fire('PreCompact', trigger, { trigger, custom_instructions: '' }, this.session, signal);
  }

  notification(message: string, signal?: AbortSignal): Promise<HookOutcome> {
    return this.hooks.fire(
      'Notification',
      'permission_prompt',
      { message, notification_type: 'permission_prompt' },
      this.session,
      signal,
    );
  }
}

/** Claude Code's matcher: empty or `*` matches everything; otherwise a regular expression over the whole name. */
function compileMatcher(matcher: string | undefined): RegExp | undefined {
  if (matcher === undefined || matcher === '' || matcher === '*') return undefined;
  return new RegExp(`^(?:${matcher})$`);
}
