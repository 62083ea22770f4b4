import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { defaultDbPath } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { checkWorkspace } from '../config/workspace.js';
import { Hooks } from '../hooks/hooks.js';
import type { Connection } from '../llm/connection.js';
import { PermissionGate } from '../permissions/gate.js';
import { parseRules } from '../permissions/rules.js';
import { createSandbox } from '../sandbox/select.js';
import type { SandboxChoice } from '../sandbox/types.js';
import type { SessionStorage } from '../store/session-storage.js';
import type { Db } from '../store/sqlite/database.js';
import { openSqliteStorage, openStorage, type SqliteStorage, type Storage } from '../store/storage.js';
import { buildRegistry, configuredTools } from '../tools/catalog.js';
import type { ExternalTools } from '../tools/external.js';
import type { PipelinePort } from '../tools/pipeline/port.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { AnyTool } from '../tools/types.js';
import type { WebAccess } from '../tools/web/access.js';
import { readProjectContext } from './project-context.js';
import type { SessionDeps, SessionMemory } from './session.js';
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
  /** Completes each session's deps for sub-agents; unset where they are off. */
  subagents?: SessionWiring;
  /**
   * The one Storage, opened on first use: the shared PostgreSQL database when `storage` is set,
   * else the SQLite file (src/store/storage.ts). Every subsystem takes its store from it.
   */
  storage(): Promise<Storage>;
  /** The sessions of `storage()`. */
  sessions(): Promise<SessionStorage>;
  /**
   * Long-term memory for sessions on this server, opened on first use; undefined when memory is
   * off or no memory was wired in (src/setup/ wires it).
   */
  memory(connection: Connection | undefined): Promise<SessionMemory | undefined>;
  /** The workspace's pipeline, for the pipeline tools; unset where it has none (they are then not offered). */
  pipeline?: PipelinePort;
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
 * Turns a session's deps into those of one whose runs may start sub-agents (src/subagents/
 * setup.ts makes it): the port the spawn tools use, and the client pinned to its server slot.
 */
export type SessionWiring = (deps: SessionDeps, connection: Connection) => SessionDeps;

export interface RuntimeOptions {
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
  subagents?: SessionWiring;
  /** More sections for the system prompt, after the project's notes (the list of skills). */
  promptSections?: string[];
  /** Prompts the user runs by name (skills): `/NAME args` in the REPL, `--skill NAME`. */
  commands?: NamedPrompt[];
  /** Said before the first turn: what did not load (a skill with bad frontmatter), and why. */
  loadNotes?: string[];
  /** Opens long-term memory over the Storage (src/memory is above agent/, so it is passed in). */
  memory?: MemoryFactory;
  /**
   * The workspace's pipeline (in the runtime's Storage), or
   * undefined where it has none (src/pipeline is above agent/, so it is passed in). Asked once,
   * when the tools are chosen.
   */
  pipeline?: (storage: StorageAccess, workspace: string, config: Config) => PipelinePort | undefined;
}

/** Closes a memory the runtime opened, if it opened (memory that failed to open has nothing to close). */
async function closeMemory(opened: Promise<SessionMemory>): Promise<void> {
  await (await opened.catch(() => undefined))?.close();
}

/** A prompt the user runs by name; what it does is the subsystem's that made it (a skill). */
export interface NamedPrompt {
  name: string;
  summary: string;
  task(args: string): string;
}

/** The runtime's Storage for a subsystem assembled before it is opened. */
export interface StorageAccess {
  /** The Storage, opened on first use. */
  open(): Promise<Storage>;
  /** The SQLite Storage, opened now (SQLite opens synchronously); undefined when the store is PostgreSQL. */
  local(): SqliteStorage | undefined;
}

export type MemoryFactory = (ports: {
  storage: () => Promise<Storage>;
  config: Config;
  workspace: string;
  connection: Connection | undefined;
}) => Promise<SessionMemory>;

/** The core every surface needs, built once from the config at the edge (src/setup/ adds the subsystems above agent/). */
export async function createRuntime(
  config: Config,
  workspaceDir: string,
  options: RuntimeOptions = {},
): Promise<Runtime> {
  const workspace = await checkWorkspace(workspaceDir);
  const web: WebAccess = {
    policy: { allow: config.web.allow_private },
    timeoutMs: config.web.timeout * 1000,
    maxBytes: Math.round(config.web.max_mb * 1024 * 1024),
    browser: config.web.browser,
    searxng: config.web.search?.searxng_url,
  };
  const dbPath = defaultDbPath(config);
  let storage: Promise<Storage> | undefined;
  const given = options.sharedStorage ?? options.storage;
  const storageOptions = {
    ...(options.db ? { db: options.db } : {}),
    ...(options.leaseHolder ? { holder: { label: options.leaseHolder } } : {}),
  };
  let local: SqliteStorage | undefined;
  const openLocal = (): SqliteStorage | undefined => {
    if (given) return given.kind === 'sqlite' ? given : undefined;
    if (config.storage) return undefined;
    local ??= openSqliteStorage(config, storageOptions);
    storage ??= Promise.resolve(local);
    return local;
  };
  // On SQLite every store shares the one open file; closing the runtime closes it.
  const openStorageOnce = () => {
    // A database that was down is tried again on the next use.
    storage ??= (
      given
        ? Promise.resolve(given)
        : config.storage
          ? openStorage(config, storageOptions)
          : Promise.resolve().then(() => openLocal()!)
    ).catch((err) => {
      storage = undefined;
      throw err;
    });
    return storage;
  };
  const pipeline = options.pipeline?.({ open: openStorageOnce, local: openLocal }, workspace, config);
  const tools = buildRegistry(
    {
      ...config.tools,
      also: options.groupsOn,
      configured: configuredTools(web, { pipeline: pipeline !== undefined }),
    },
    options.extraTools ?? [],
    options.external,
    options.groups,
  );
  const extra = options.instructions?.trim();
  const { mode, allow, deny } = config.permissions;
  const gate = new PermissionGate(mode, { allow: parseRules(allow), deny: parseRules(deny) }, workspace);
  let sandbox: Promise<SandboxChoice> | undefined;
  let warned = false;
  const getSandbox = (): Promise<SandboxChoice> => {
    const settings = config.sandbox;
    sandbox ??= createSandbox(settings.mode, {
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
    }).then((choice) => {
      // No sandbox the user did not choose: commands then wait for their answer, whatever the mode.
      gate.commandsNeedApproval(choice.commandsNeedApproval);
      return choice;
    });
    return sandbox;
  };
  // Kept per server: a REPL that started without one opens memory again once it connects.
  let memory: { server: string | undefined; opened: Promise<SessionMemory> } | undefined;
  // Every memory opened, closed with the runtime: a session may still hold one the REPL replaced.
  const memories: Array<Promise<SessionMemory>> = [];
  const context = await readProjectContext(workspace);
  const prompts = new Map<boolean, string>();
  const promptFor = (nativeTools: boolean) => {
    let prompt = prompts.get(nativeTools);
    if (prompt === undefined) {
      prompt = buildSystemPrompt({
        workspace,
        context,
        toolsInPrompt: nativeTools ? undefined : tools.schemas(),
        sections: options.promptSections,
        instructions: extra || undefined,
      });
      prompts.set(nativeTools, prompt);
    }
    return prompt;
  };
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
    ...(options.subagents ? { subagents: options.subagents } : {}),
    ...(pipeline ? { pipeline } : {}),
    systemPrompt: promptFor(config.native_tools !== false),
    systemPromptFor: (connection) => promptFor(connection.nativeTools),
    storage: openStorageOnce,
    async sessions() {
      return options.sessions ?? (await openStorageOnce()).sessions;
    },
    memory(connection) {
      const factory = options.memory;
      if (!factory || !config.memory.enabled) return Promise.resolve(undefined);
      if (!memory || memory.server !== connection?.baseUrl) {
        memory = {
          server: connection?.baseUrl,
          opened: factory({ storage: openStorageOnce, config, workspace, connection }),
        };
        memories.push(memory.opened);
      }
      return memory.opened;
    },
    sandbox: getSandbox,
    async sandboxForSession() {
      const choice = await getSandbox();
      if (warned) return { ...choice, warning: undefined };
      warned = true;
      return choice;
    },
    async close() {
      await options.external?.close();
      await Promise.all(memories.map(closeMemory));
      const opened = await storage?.catch(() => undefined);
      if (opened !== options.sharedStorage) await opened?.close();
      options.db?.close();
      await (await sandbox?.catch(() => undefined))?.sandbox.dispose();
    },
  };
}
