import { resolve } from 'node:path';
import { createRuntime, type Runtime } from '../agent/runtime.js';
import { type FlagSetting, hearthHome, type LoadedConfig, loadConfig } from '../config/load.js';
import { describeIgnored } from '../config/security.js';
import { checkWorkspace } from '../config/workspace.js';
import { loadSkills } from '../skills/index.js';
import { setupSubagents } from '../subagents/setup.js';
import { builtInToolNames } from '../tools/catalog.js';
import { openSessionMemory } from './memory-access.js';
import { UsageError } from './usage-error.js';

/** Flags shared by the main command and its subcommands. */
export interface GlobalFlags {
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  workspace: string;
  maxIterations?: number;
  timeout?: number;
  tools?: string[];
  db?: string;
  permissionMode?: string;
  yolo?: boolean;
  allow?: string[];
  deny?: string[];
  /** Deep-work mode (the main command's --deep): sub-agents are on unless the config says otherwise. */
  deep?: boolean;
}

/** The config keys the flags set, in order. Flags that contradict each other are an error, never resolved silently. */
function flagSettings(flags: GlobalFlags): FlagSetting[] {
  if (flags.yolo && flags.permissionMode !== undefined && flags.permissionMode !== 'auto') {
    throw new UsageError(
      `--yolo and --permission-mode ${flags.permissionMode} contradict each other (--yolo means --permission-mode auto). Give one of them.`,
    );
  }
  const settings: FlagSetting[] = [];
  const add = (key: string, value: unknown, name: string) => {
    if (value !== undefined) settings.push({ key, value, name });
  };
  add('model', flags.model, '--model');
  add('base_url', flags.baseUrl, '--base-url');
  add('api_key', flags.apiKey, '--api-key');
  add('max_iterations', flags.maxIterations, '--max-iterations');
  add('timeout', flags.timeout, '--timeout');
  add('db_path', flags.db, '--db');
  // The flag names the whole set: it wins over both lists from config files.
  add('tools.enabled', flags.tools, '--tools');
  add('tools.disabled', flags.tools && [], '--tools');
  add('permissions.mode', flags.permissionMode, '--permission-mode');
  add('permissions.mode', flags.yolo ? 'auto' : undefined, '--yolo');
  add('permissions.allow', flags.allow, '--allow');
  add('permissions.deny', flags.deny, '--deny');
  return settings;
}

/** Loads the config for the flags' workspace, with the flags as the last layer. */
export async function loadConfigFromFlags(flags: GlobalFlags): Promise<LoadedConfig> {
  const settings = flagSettings(flags);
  return loadConfig({ workspace: await checkWorkspace(resolve(flags.workspace)), flags: settings });
}

/** Builds the runtime from a loaded config, skills and sub-agents included. */
export async function runtimeFromConfig(loaded: LoadedConfig, flags: GlobalFlags): Promise<Runtime> {
  const { config, ignored } = loaded;
  const workspace = await checkWorkspace(resolve(flags.workspace));
  const { notes, groups, ...subagents } = await setupSubagents(config, workspace, flags.deep === true);
  let runtime: Runtime | undefined;
  const skills = await loadSkills({
    workspace,
    hearthHome: hearthHome(process.env),
    registry: () => runtime!.tools,
    reserved: builtInToolNames(Object.values(groups).flat()),
  });
  runtime = await createRuntime(config, workspace, {
    configNotes: [...describeIgnored(ignored), ...notes],
    loadNotes: skills.notes,
    extraTools: skills.tools,
    groups: { ...groups, ...skills.groups },
    promptSections: skills.section ? [skills.section] : [],
    commands: skills.commands,
    ...subagents,
    memory: openSessionMemory,
  });
  return runtime;
}

/** Loads the config with the flags as the last layer, and builds the runtime from it. */
export async function runtimeFromFlags(flags: GlobalFlags): Promise<Runtime> {
  return runtimeFromConfig(await loadConfigFromFlags(flags), flags);
}
