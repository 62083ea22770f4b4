import { createRuntime, type Runtime } from '../agent/runtime.js';
import { defaultDbPath, hearthHome, type LoadedConfig } from '../config/load.js';
import { describeIgnored } from '../config/security.js';
import { checkWorkspace } from '../config/workspace.js';
import { pipelinePort } from '../pipeline/steering.js';
import { loadSkills } from '../skills/index.js';
import type { SessionStorage } from '../store/session-storage.js';
import type { Db } from '../store/sqlite/database.js';
import type { Storage } from '../store/storage.js';
import { setupSubagents } from '../subagents/setup.js';
import { builtInToolNames } from '../tools/catalog.js';
import { pipelineTools } from '../tools/pipeline/index.js';
import type { AnyTool } from '../tools/types.js';
import type { Clock } from '../util/clock.js';
import { trustedLink } from '../worktrees/registry.js';
import { diagnosticsWiring } from './diagnostics-wiring.js';
import { checkHomeOutsideWorkspace } from './home-layout.js';
import { sessionMemory } from './memory-access.js';
import { checkpointWiring, memoryWiring, wakeupWiring } from './session-wiring.js';
import { telemetryWiring } from './telemetry.js';

/**
 * The one place a complete runtime is put together: the CLI, the library `Agent`, the gateway, the
 * scheduler and the pipeline all come through here, so a session has the same MCP servers, skills,
 * agent-made tools, sub-agents, hooks and long-term memory for the same config wherever it runs.
 * `agent/` builds the core (tools, permissions, prompt, store, sandbox) and may not import the
 * subsystems above it; this folder sits above them and wires them in.
 */

export interface AssembleOptions {
  /** The Hearth home: user skills, `mcp.json`, project approvals, USER.md and MEMORY.md. Default $HEARTH_HOME or ~/.hearth. */
  home?: string;
  /** The user's environment: `${VAR}` in MCP settings, what MCP servers inherit. Default this process's. */
  env?: NodeJS.ProcessEnv;
  /** Deep-work mode: sub-agents are on unless the config says otherwise. */
  deep?: boolean;
  /** Tools of the caller's own (`defineTool`), offered beside the built-in ones; one named like a built-in replaces it. */
  tools?: AnyTool[];
  /** Appended to the system prompt of new sessions. */
  instructions?: string;
  /** An already open database; the runtime closes it. */
  db?: Db;
  /** The session storage, already open (over `db` when it is SQLite); the runtime closes it. */
  storage?: Storage;
  /** Sessions the caller keeps open and closes (the gateway's); `storage` is then unused. */
  sessions?: SessionStorage;
  /** The process's Storage, which its owner keeps open (a worker's, a gateway's): every store is taken from it. */
  sharedStorage?: Storage;
  /** How this process is named in the run leases of sessions it opens ("hearth worker on gpu-box (pid 4242)"). */
  leaseHolder?: string;
  /** Skills and agent-made tools; default on (as in the CLI). */
  skills?: boolean;
  /** More to say before the first turn (ignored settings of a workspace's own config, for the gateway). */
  notes?: string[];
  /** What sub-agents' time limits run on. */
  clock?: Clock;
}

/**
 * Builds the full runtime for `workspace` from a loaded config. Nothing starts here: MCP servers
 * start on the first call to one of their tools, memory opens with the first session, the sandbox
 * with the first command.
 */
export async function assembleRuntime(
  loaded: Pick<LoadedConfig, 'config'> & Partial<Pick<LoadedConfig, 'ignored'>>,
  workspaceDir: string,
  options: AssembleOptions = {},
): Promise<Runtime> {
  const { config } = loaded;
  const workspace = await checkWorkspace(workspaceDir);
  const home = options.home ?? hearthHome(options.env);
  // An open database was placed by the caller; otherwise check the one createRuntime will open.
  await checkHomeOutsideWorkspace(workspace, {
    home,
    dbPath: options.db ? undefined : defaultDbPath(config),
  });
  const custom = options.tools ?? [];
  const linkedRepo = await trustedLink(home, workspace);
  // The MCP SDK is large: loaded when a runtime is built, not when the library is imported.
  const { openMcpHub } = await import('../mcp/setup.js');
  const [mcp, agents] = await Promise.all([
    openMcpHub(config, workspace, home, options.env),
    setupSubagents(config, workspace, options.deep === true, { clock: options.clock, home }),
  ]);
  const { notes: agentNotes, groups, groupsOn, wiring: subagents } = agents;
  let runtime: Runtime | undefined;
  try {
    const skills =
      options.skills === false
        ? undefined
        : await loadSkills({
            workspace,
            hearthHome: home,
            registry: () => runtime!.tools,
            // An agent-made tool may take neither a built-in name nor one of the caller's tools.
            reserved: builtInToolNames([...Object.values(groups).flat(), ...custom]),
          });
    runtime = await createRuntime(config, workspace, {
      ...(linkedRepo ? { linkedRepo } : {}),
      configNotes: [
        ...describeIgnored(loaded.ignored ?? []),
        ...(options.notes ?? []),
        ...agentNotes,
        ...mcp.notes,
      ],
      external: mcp.hub,
      loadNotes: skills?.notes,
      extraTools: [...custom, ...(skills?.tools ?? [])],
      groups: { ...groups, ...skills?.groups },
      promptSections: skills?.section ? [skills.section] : [],
      commands: skills?.commands,
      instructions: options.instructions,
      db: options.db,
      storage: options.storage,
      sharedStorage: options.sharedStorage,
      sessions: options.sessions,
      leaseHolder: options.leaseHolder,
      groupsOn,
      // In this order: a sub-agent's session gets the wake-ups and checkpoints wired before it, not
      // memory. Telemetry first, so a sub-agent's session is traced too.
      wiring: [
        ...[telemetryWiring(config, options.env)].filter((w) => w !== undefined),
        wakeupWiring(),
        checkpointWiring(home, config.checkpoints),
        subagents,
        memoryWiring(sessionMemory(home)),
        diagnosticsWiring(options.env ?? process.env),
      ],
      workspaceTools: (storage, at, settings) => {
        const pipeline = pipelinePort(storage, at, settings);
        return pipeline ? pipelineTools.bind(pipeline) : new Map();
      },
    });
    return runtime;
  } catch (err) {
    await mcp.hub?.close();
    throw err;
  }
}
