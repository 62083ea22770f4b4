import { join } from 'node:path';
import type { z } from 'zod';
import { configError, describeIssues } from '../config/errors.js';
import type { HooksSettings } from '../config/hooks-schema.js';
import type { mcpServerSchema } from '../config/mcp-servers.js';
import { type Config, type ConfigInput, configSchema } from '../config/schema.js';
import type { ApprovalAnswer, ApprovalRequest } from '../permissions/gate.js';
import type { PermissionMode } from '../permissions/modes.js';
import type { SandboxMode } from '../sandbox/types.js';
import type { AnyTool } from '../tools/types.js';

/**
 * Answers an approval request. `true` is "once", `false` is "deny"; an ApprovalAnswer can also say
 * "always" (similar calls run without asking for the rest of the session) or give the model a reason.
 * A callback that throws counts as "deny".
 */
export type ApprovalCallback = (
  request: ApprovalRequest,
  signal: AbortSignal,
) => ApprovalAnswer | boolean | Promise<ApprovalAnswer | boolean>;

export interface AgentSandboxOptions {
  mode?: SandboxMode;
  /** Outbound network for commands; off by default. */
  network?: boolean;
  /** Extra environment variable names passed into the sandbox (exact, or PREFIX*). */
  env?: string[];
  /** Memory for all of a command's processes, where the system can hold it. */
  memoryMb?: number;
  cpus?: number;
  /** Processes and threads one command may have at once. */
  maxProcesses?: number;
  /** How much one command may grow the workspace's disk by, MB. */
  maxWriteMb?: number;
  /** Size of each private temp filesystem in the sandbox, MB. */
  tmpMb?: number;
}

/** One MCP server as the `mcpServers` files write it: `{command, args, env, cwd}` or `{type: 'http', url, headers}`. */
export type McpServerOptions = z.input<typeof mcpServerSchema>;

export interface AgentOptions {
  /** OpenAI-compatible base URL, e.g. http://127.0.0.1:1234/v1. Unset: local servers are probed. */
  baseUrl?: string;
  /** Unset: the server's loaded (or first) chat model, or the stored session's model. */
  model?: string;
  apiKey?: string;
  /** The folder the agent works in. Unset: the stored session's folder, else `process.cwd()`. */
  workspace?: string;
  /**
   * Tool names and groups ('default', 'git', 'files', ...) and custom tools from `defineTool`.
   * With no names the default set is offered; custom tools are always added.
   */
  tools?: Array<AnyTool | string>;
  /** 'normal' (default): read-only tools run, changes ask. 'auto' runs everything; see the README. */
  permissionMode?: PermissionMode;
  /** Rules such as "shell(npm test*)" or "write_file(src/**)"; deny wins over allow. */
  allow?: string[];
  deny?: string[];
  /** Asked about calls that need approval. Unset: such a call pauses the run (see `resume`). */
  approve?: ApprovalCallback;
  /** Where commands run: 'auto' (default) takes the strongest sandbox this machine has. */
  sandbox?: SandboxMode | AgentSandboxOptions;
  /**
   * The SQLite file sessions are kept in; default `hearth.db` in the Hearth home (`home`), shared
   * with the CLI, so a paused run can be resumed by another process. ':memory:' keeps nothing.
   */
  dbPath?: string;
  /**
   * The Hearth home: the user's skills, `mcp.json`, project approvals, USER.md and MEMORY.md, and
   * the default database. Default `$HEARTH_HOME`, else `~/.hearth` (the CLI's).
   */
  home?: string;
  /** Continue this stored session (an id, or a unique prefix of one) instead of starting a new one. */
  sessionId?: string;
  /**
   * MCP tool servers by name, in the `mcpServers` shape of Claude Code's and Cursor's files. They
   * join the user's `<home>/mcp.json` and the workspace's `.mcp.json` and `.hearth/mcp.json`, which
   * count only once approved with `hearth config trust` (a warning says when one was skipped). A
   * server starts on the first call to one of its tools.
   */
  mcpServers?: Record<string, McpServerOptions>;
  /**
   * Programs run on the agent's events, in Claude Code's `hooks` shape (`PreToolUse`,
   * `PostToolUse`, `Stop`, ...). Only these run: the workspace cannot add hooks.
   */
  hooks?: HooksSettings;
  /** Skills (SKILL.md folders) and agent-made tools from the workspace and the home; default on. */
  skills?: boolean;
  /**
   * Long-term memory (the memory block in a new session's first message, the memory tools); default
   * on. `embeddingModel` names the server's embeddings model; `budget` caps the block in tokens.
   */
  memory?: boolean | { embeddingModel?: string; budget?: number };
  /** Sub-agents (`delegate`, `decompose`); default off, as in the CLI without --deep. */
  subagents?:
    | boolean
    | { maxDepth?: number; parallel?: number; maxTurns?: number; timeLimitMs?: number; budgetShare?: number };
  /** Tokens; unset: learned from the server. */
  contextWindow?: number;
  /** Model turns per run; default 50. */
  maxIterations?: number;
  /** Tokens (prompt + completion) one run may spend. */
  tokenBudget?: number;
  /** Share of the context window at which older turns are summarized; default 0.75. */
  compactionThreshold?: number;
  /** Whole-request limit; default 10 minutes (local models can be slow on long prompts). */
  timeoutMs?: number;
  /** Silence allowed between streamed chunks; default 3 minutes. */
  idleTimeoutMs?: number;
  /** How long to wait for the first chunk while the server reads the prompt; default `timeoutMs`. */
  firstByteTimeoutMs?: number;
  maxRetries?: number;
  temperature?: number;
  maxTokens?: number;
  /**
   * Appended to the system prompt of a new session. It is fixed for the session's life (so local
   * servers keep their prompt cache); a resumed session keeps the prompt it started with.
   */
  instructions?: string;
  /** Aborts every run of this agent. */
  signal?: AbortSignal;
}

/** The options as config: validated and defaulted by the same schema as the config files. */
export function configFromOptions(options: AgentOptions, home: string): Config {
  const sandbox = typeof options.sandbox === 'string' ? { mode: options.sandbox } : options.sandbox;
  const memory = typeof options.memory === 'object' ? options.memory : undefined;
  const subagents = typeof options.subagents === 'object' ? options.subagents : undefined;
  const names = (options.tools ?? []).filter((t): t is string => typeof t === 'string');
  const custom = (options.tools ?? []).filter((t): t is AnyTool => typeof t !== 'string');
  const input: ConfigInput = {
    base_url: options.baseUrl,
    model: options.model,
    api_key: options.apiKey,
    max_iterations: options.maxIterations,
    timeout: seconds(options.timeoutMs),
    idle_timeout: seconds(options.idleTimeoutMs),
    first_byte_timeout: seconds(options.firstByteTimeoutMs),
    max_retries: options.maxRetries,
    temperature: options.temperature,
    max_tokens: options.maxTokens,
    context_window: options.contextWindow,
    token_budget: options.tokenBudget,
    db_path: options.dbPath ?? join(home, 'hearth.db'),
    // Names given: exactly those, with the custom tools; none: the default set and the custom tools.
    tools: { enabled: names.length > 0 ? [...names, ...custom.map((t) => t.name)] : undefined },
    compaction: { threshold: options.compactionThreshold },
    permissions: { mode: options.permissionMode, allow: options.allow, deny: options.deny },
    sandbox: sandbox && {
      mode: sandbox.mode,
      network: sandbox.network,
      env: sandbox.env,
      memory_mb: sandbox.memoryMb,
      cpus: sandbox.cpus,
      max_processes: sandbox.maxProcesses,
      max_write_mb: sandbox.maxWriteMb,
      tmp_mb: sandbox.tmpMb,
    },
    mcp: { servers: options.mcpServers },
    hooks: options.hooks,
    memory: {
      enabled: options.memory === undefined ? undefined : options.memory !== false,
      embedding_model: memory?.embeddingModel,
      budget: memory?.budget,
    },
    subagents: {
      enabled: options.subagents === undefined ? undefined : options.subagents !== false,
      max_depth: subagents?.maxDepth,
      parallel: subagents?.parallel,
      max_turns: subagents?.maxTurns,
      time_limit: seconds(subagents?.timeLimitMs),
      budget_share: subagents?.budgetShare,
    },
  };
  // The JSON round trip drops the unset options, so the schema's defaults apply to them.
  const given = JSON.parse(JSON.stringify(input)) as unknown;
  const result = configSchema.safeParse(given);
  if (result.success) return result.data;
  throw configError(
    'the Agent options',
    describeIssues(result.error.issues, given, configSchema, optionName),
  );
}

/** Schema keys (or their starts) that do not simply turn into camelCase option names. */
const RENAMED: Array<[string, string]> = [
  ['timeout', 'timeoutMs'],
  ['idle_timeout', 'idleTimeoutMs'],
  ['first_byte_timeout', 'firstByteTimeoutMs'],
  ['compaction.threshold', 'compactionThreshold'],
  ['permissions.mode', 'permissionMode'],
  ['permissions.', ''],
  ['mcp.servers', 'mcpServers'],
  ['subagents.time_limit', 'subagents.timeLimitMs'],
  ['memory.enabled', 'memory'],
  ['subagents.enabled', 'subagents'],
];

function optionName(key: string): string {
  const renamed = RENAMED.find(([from]) => key === from || (from.endsWith('.') && key.startsWith(from)));
  const prefix = renamed ?? RENAMED.find(([from]) => key.startsWith(`${from}.`));
  if (prefix) return `${prefix[1]}${key.slice(prefix[0].length)}`;
  // Hooks and MCP servers keep the names of the files they are copied from.
  if (key.startsWith('hooks.')) return key;
  return key.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());
}

function seconds(ms: number | undefined): number | undefined {
  return ms === undefined ? undefined : ms / 1000;
}
