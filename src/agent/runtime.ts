import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { defaultDbPath } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { checkWorkspace } from '../config/workspace.js';
import { Hooks } from '../hooks/hooks.js';
import type { Connection } from '../llm/connection.js';
import { PermissionGate } from '../permissions/gate.js';
import { parseRules } from '../permissions/rules.js';
import type { LinkedRepo } from '../sandbox/linked-repo.js';
import { createSandbox } from '../sandbox/select.js';
import type { SandboxChoice, SandboxOptions } from '../sandbox/types.js';
import type { SessionStorage } from '../store/session-storage.js';
import type { Db } from '../store/sqlite/database.js';
import { openSqliteStorage, openStorage, type SqliteStorage, type Storage } from '../store/storage.js';
import { buildRegistry, configuredTools } from '../tools/catalog.js';
import type { ExternalTools } from '../tools/external.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { AnyTool } from '../tools/types.js';
import type { WebAccess } from '../tools/web/access.js';
import type { OutputStyle } from './output-style.js';
import { type ProjectContext, readProjectContext } from './project-context.js';
import type { SessionDeps } from './session-deps.js';
import { buildSystemPrompt } from './system-prompt.js';

/** A workspace's tools, permissions, prompt, store and sandbox; src/setup/ assembles the full one for every surface. */
export interface Runtime {
  config: Config;
  workspace: string;
  tools: ToolRegistry;
  /** The MCP servers' tools, when there are any (their state for /mcp and doctor). */
  external?: ExternalTools;
  gate: PermissionGate;
  /** The configured hooks (from settings the workspace cannot write unapproved). */
  hooks: Hooks;
  /** Where transcripts for hook scripts go: beside the database, never in the workspace. */
  transcriptDir: string;
  /** How web tools reach the network. */
  web: WebAccess;
  /** The system prompt of a session whose tools go to the server as `tools` unless the config says not. */
  systemPrompt: string;
  /** The system prompt for a connection: with the tools described in it when they are not sent natively. */
  systemPromptFor(connection: Pick<Connection, 'nativeTools'>): string;
  /** What the user should hear about the configuration before the first turn (ignored settings). */
  configNotes: string[];
  /** What else the user should hear before the first turn: skills that did not load, and why. */
  loadNotes: string[];
  /** Prompts the user runs by name (skills). */
  commands: NamedPrompt[];
  /** What the subsystems above agent/ add to each session's deps, in order (src/setup/ wires them). */
  wiring: readonly SessionWiring[];
  /**
   * Where sessions are kept, opened on first use: the shared PostgreSQL database when `storage`
   * is set, else the SQLite file (src/store/storage.ts).
   */
  storage(): Promise<Storage>;
  /** The sessions of `storage()`. */
  sessions(): Promise<SessionStorage>;
  /** Created on first use: probing the backends costs a trial run. */
  sandbox(): Promise<SandboxChoice>;
  /**
   * The sandbox as sessions take it: its warning (no sandbox found) comes with it the first time
   * only, so that it is said once however many sessions and runs follow (the REPL says it at
   * start-up, a one-shot run before its first tool call).
   */
  sandboxForSession(): Promise<SandboxChoice>;
  close(): Promise<void>;
}

/**
 * A subsystem above agent/ as sessions get it (src/setup/ makes them: wake-ups, sub-agents,
 * memory): it adds its parts to each session's deps (tools bound to the session, a preface, a
 * client pinned to a server slot), and releases what it opened when the runtime closes.
 */
export interface SessionWiring {
  wire(deps: SessionDeps, connection: Connection, runtime: Runtime): SessionDeps | Promise<SessionDeps>;
  close?(): Promise<void>;
}

export interface RuntimeOptions {
  /** The main repository of a worktree Hearth made, when the workspace is one (sandbox/linked-repo.ts). */
  linkedRepo?: LinkedRepo;
  /** Extra instructions appended to the system prompt, fixed for the session. */
  instructions?: string;
  /** Tools from MCP servers, added when the runtime builds the registry; closed with the runtime. */
  external?: ExternalTools;
  /** An already open SQLite database to open the Storage over (when no `storage` URL is set); the runtime closes it. */
  db?: Db;
  /** The Storage, already open; the runtime closes it unless `sharedStorage`. */
  storage?: Storage;
  /** The process's Storage, which its owner keeps open and closes (a worker's, shared by its runs). */
  sharedStorage?: Storage;
  /** Sessions the caller keeps open and closes (the gateway's, shared by its workspaces); `storage` is then unused. */
  sessions?: SessionStorage;
  /** How this process is named in the run leases of sessions it opens. */
  leaseHolder?: string;
  /** Said before the first turn, with the sandbox's warning: settings the config loading ignored. */
  configNotes?: string[];
  /** Tool groups of the subsystems above agent/ (sub-agents, promote_tool), offered when named in `tools`. */
  groups?: Record<string, AnyTool[]>;
  /** Groups a setting switched on: offered as if named in `tools.enabled`. */
  groupsOn?: string[];
  /** Tools offered unless switched off: the caller's own, the skill tool, agent-made tools. */
  extraTools?: AnyTool[];
  /** What the subsystems above agent/ add to each session's deps, in order; closed with the runtime. */
  wiring?: SessionWiring[];
  /** More sections for the system prompt, after the project's notes (the list of skills). */
  promptSections?: string[];
  /** Prompts the user runs by name (skills): `/NAME args` in the REPL, `--skill NAME`. */
  commands?: NamedPrompt[];
  /** Said before the first turn: what did not load (a skill with bad frontmatter), and why. */
  loadNotes?: string[];
  /**
   * The tools bound to the workspace's own ports (the pipeline's, in the runtime's Storage), each
   * paired with the catalog's unbound tool it stands for; asked once, when the tools are chosen. A
   * tool that needs a setting is offered once bound.
   */
  workspaceTools?: (
    storage: StorageAccess,
    workspace: string,
    config: Config,
  ) => ReadonlyMap<AnyTool, AnyTool>;
}

/** The runtime's Storage for a subsystem assembled before it is opened. */
export interface StorageAccess {
  /** The Storage, opened on first use. */
  open(): Promise<Storage>;
  /** The SQLite Storage, opened now (SQLite opens synchronously); undefined when the store is PostgreSQL. */
  local(): SqliteStorage | undefined;
}

/** A prompt the user runs by name; what it does is the subsystem's that made it (a skill). */
export interface NamedPrompt {
  name: string;
  summary: string;
  task(args: string): string;
}

/** The core every surface needs, built once from the config at the edge (src/setup/ adds the subsystems above agent/). */
export async function createRuntime(
  config: Config,
  workspaceDir: string,
  options: RuntimeOptions = {},
): Promise<Runtime> {
  const workspace = await checkWorkspace(workspaceDir);
  const web = webAccess(config);
  const dbPath = defaultDbPath(config);
  const storage = storageOf(config, options);
  const bound = options.workspaceTools?.(storage, workspace, config) ?? new Map<AnyTool, AnyTool>();
  const tools = buildRegistry(
    { ...config.tools, also: options.groupsOn, configured: configuredTools(web, bound.keys()) },
    options.extraTools ?? [],
    options.external,
    options.groups,
  ).bind(bound);
  const { mode, allow, deny } = config.permissions;
  const gate = new PermissionGate(mode, { allow: parseRules(allow), deny: parseRules(deny) }, workspace);
  const sandbox = sandboxOf(config, workspace, gate, options.linkedRepo);
  const wiring = options.wiring ?? [];
  const promptFor = systemPrompts(workspace, await readProjectContext(workspace), tools, {
    ...options,
    outputStyle: config.output_style,
  });
  return {
    config,
    workspace,
    tools,
    external: options.external,
    gate,
    hooks: await Hooks.create(config.hooks, { workspace }),
    transcriptDir: join(dbPath === ':memory:' ? tmpdir() : dirname(dbPath), 'transcripts'),
    web,
    configNotes: options.configNotes ?? [],
    commands: options.commands ?? [],
    loadNotes: options.loadNotes ?? [],
    wiring,
    systemPrompt: promptFor(config.native_tools !== false),
    systemPromptFor: (connection) => promptFor(connection.nativeTools),
    storage: storage.open,
    async sessions() {
      return options.sessions ?? (await storage.open()).sessions;
    },
    sandbox: sandbox.get,
    sandboxForSession: sandbox.forSession,
    async close() {
      await options.external?.close();
      await Promise.all(wiring.map((wired) => wired.close?.()));
      await storage.close();
      await sandbox.dispose();
    },
  };
}

/**
 * The runtime's one Storage, opened on first use (a database that was down is tried again on the
 * next use). On SQLite every store shares the one open file, which opens synchronously, so a
 * subsystem assembled before any await can have it at once (`local`).
 */
function storageOf(config: Config, options: RuntimeOptions): StorageAccess & { close(): Promise<void> } {
  let storage: Promise<Storage> | undefined;
  let local: SqliteStorage | undefined;
  const given = options.sharedStorage ?? options.storage;
  const settings = {
    ...(options.db ? { db: options.db } : {}),
    ...(options.leaseHolder ? { holder: { label: options.leaseHolder } } : {}),
  };
  const openLocal = (): SqliteStorage | undefined => {
    if (given) return given.kind === 'sqlite' ? given : undefined;
    if (config.storage) return undefined;
    local ??= openSqliteStorage(config, settings);
    storage ??= Promise.resolve(local);
    return local;
  };
  const open = (): Promise<Storage> => {
    storage ??= (
      given
        ? Promise.resolve(given)
        : config.storage
          ? openStorage(config, settings)
          : Promise.resolve().then(() => openLocal()!)
    ).catch((err) => {
      storage = undefined;
      throw err;
    });
    return storage;
  };
  return {
    open,
    local: openLocal,
    async close() {
      // Memory and the other wired subsystems closed first: they may still write to it.
      const opened = await storage?.catch(() => undefined);
      if (opened !== options.sharedStorage) await opened?.close();
      options.db?.close();
    },
  };
}

function webAccess(config: Config): WebAccess {
  return {
    policy: { allow: config.web.allow_private },
    timeoutMs: config.web.timeout * 1000,
    maxBytes: Math.round(config.web.max_mb * 1024 * 1024),
    browser: config.web.browser,
    searxng: config.web.search?.searxng_url,
  };
}

/** The sandbox settings for `workspace` from the config: a session's, or a sub-agent's in a worktree. */
export function sandboxOptions(config: Config, workspace: string, linkedRepo?: LinkedRepo): SandboxOptions {
  const settings = config.sandbox;
  return {
    workspace,
    network: settings.network === true,
    ...(Array.isArray(settings.network)
      ? { allowDomains: settings.network, privateAllow: config.web.allow_private }
      : {}),
    envAllow: settings.env,
    memoryMb: settings.memory_mb,
    cpus: settings.cpus,
    maxProcesses: settings.max_processes,
    tmpMb: settings.tmp_mb,
    maxWriteMb: settings.max_write_mb,
    ...(linkedRepo ? { linkedRepo } : {}),
  };
}

/**
 * The workspace's sandbox, created on first use (probing the backends costs a trial run). Sessions
 * take it with its warning (no sandbox found) the first time only, so that it is said once however
 * many sessions and runs follow.
 */
function sandboxOf(config: Config, workspace: string, gate: PermissionGate, linkedRepo?: LinkedRepo) {
  let sandbox: Promise<SandboxChoice> | undefined;
  let warned = false;
  const get = (): Promise<SandboxChoice> => {
    sandbox ??= createSandbox(config.sandbox.mode, sandboxOptions(config, workspace, linkedRepo)).then(
      (choice) => {
        // No sandbox the user did not choose: commands then wait for their answer, whatever the mode.
        gate.commandsNeedApproval(choice.commandsNeedApproval);
        return choice;
      },
    );
    return sandbox;
  };
  return {
    get,
    async forSession(): Promise<SandboxChoice> {
      const choice = await get();
      if (warned) return { ...choice, warning: undefined };
      warned = true;
      return choice;
    },
    async dispose(): Promise<void> {
      await (await sandbox?.catch(() => undefined))?.sandbox.dispose();
    },
  };
}

/** The system prompt for tools sent natively or described in it, each built once. */
function systemPrompts(
  workspace: string,
  context: ProjectContext,
  tools: ToolRegistry,
  options: Pick<RuntimeOptions, 'promptSections' | 'instructions'> & { outputStyle?: OutputStyle },
): (nativeTools: boolean) => string {
  const extra = options.instructions?.trim();
  const prompts = new Map<boolean, string>();
  return (nativeTools) => {
    let prompt = prompts.get(nativeTools);
    if (prompt === undefined) {
      prompt = buildSystemPrompt({
        workspace,
        context,
        toolsInPrompt: nativeTools ? undefined : tools.schemas(),
        sections: options.promptSections,
        instructions: extra || undefined,
        outputStyle: options.outputStyle,
      });
      prompts.set(nativeTools, prompt);
    }
    return prompt;
  };
}
