import { resolve } from 'node:path';
import type { Runtime } from '../agent/runtime.js';
import { type FlagSetting, type LoadedConfig, loadConfig } from '../config/load.js';
import { checkWorkspace } from '../config/workspace.js';
import { assembleRuntime } from '../setup/runtime.js';
import { UsageError } from './usage-error.js';

/** Flags shared by the main command and its subcommands. */
export interface GlobalFlags {
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  workspace: string;
  maxIterations?: number;
  timeout?: number;
  /** The reasoning setting: off, low, medium or high. */
  thinking?: string;
  tools?: string[];
  db?: string;
  permissionMode?: string;
  yolo?: boolean;
  allow?: string[];
  deny?: string[];
  seed?: number;
  repetitionPenalty?: number;
  /** terse, narrative or json (`output_style`). */
  outputStyle?: string;
  /** Deep-work mode (the main command's --deep): sub-agents are on unless the config says otherwise. */
  deep?: boolean;
}

/** The config keys the flags set, in order. Flags that contradict each other are an error, never resolved silently. */
export function flagSettings(flags: GlobalFlags): FlagSetting[] {
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
  add('reasoning', flags.thinking, '--thinking');
  add('seed', flags.seed, '--seed');
  add('repetition_penalty', flags.repetitionPenalty, '--repetition-penalty');
  add('output_style', flags.outputStyle, '--output-style');
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

/** Loads the config for the flags' workspace, with the flags (and a command's own, `extra`) as the last layer. */
export async function loadConfigFromFlags(
  flags: GlobalFlags,
  extra: FlagSetting[] = [],
): Promise<LoadedConfig> {
  const settings = [...flagSettings(flags), ...extra];
  return loadConfig({ workspace: await checkWorkspace(resolve(flags.workspace)), flags: settings });
}

/** Builds the full runtime from a loaded config (src/setup/), for the flags' workspace and mode. */
export function runtimeFromConfig(loaded: LoadedConfig, flags: GlobalFlags): Promise<Runtime> {
  return assembleRuntime(loaded, resolve(flags.workspace), { deep: flags.deep === true });
}

/** Loads the config with the flags as the last layer, and builds the runtime from it. */
export async function runtimeFromFlags(flags: GlobalFlags): Promise<Runtime> {
  return runtimeFromConfig(await loadConfigFromFlags(flags), flags);
}
