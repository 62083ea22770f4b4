import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDotenv } from './dotenv.js';
import { ConfigError, configError, describeIssues } from './errors.js';
import {
  fileLayer,
  type Layer,
  leaves,
  mergeLayer,
  type Provenance,
  type Setting,
  settingsLayer,
  validateLayer,
} from './layers.js';
import { findProfile, profileLayer, type SelectedProfile } from './profiles.js';
import { type Config, configSchema } from './schema.js';
import {
  type ConfigFileLocation,
  envSettings,
  hearthHome,
  locateConfigFile,
  readConfigFile,
} from './sources.js';

export { ConfigError } from './errors.js';
export type { Setting as FlagSetting } from './layers.js';
export type { SelectedProfile } from './profiles.js';
export { defaultDbPath, hearthHome } from './sources.js';

export interface ConfigSources {
  workspace: string;
  /** Settings from command-line flags, in the order given (a later one wins over an earlier). */
  flags?: Setting[];
  /** The process environment; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Directory holding the user's config file; default $HEARTH_HOME or ~/.hearth. */
  userDir?: string;
}

/** Where the config files are, and whether each exists. */
export interface ConfigFiles {
  user: ConfigFileLocation;
  workspace: ConfigFileLocation;
  dotenv: { path: string; exists: boolean };
}

export interface LoadedConfig {
  config: Config;
  /**
   * For each key path with a value, where the value came from: `default`, a file path,
   * `.env HEARTH_MODEL`, `env HEARTH_MODEL`, a flag such as `--model`, or `profile coder, <file>`.
   * Rule lists gathered from several sources join their labels with ` + `.
   */
  sources: Provenance;
  profile?: SelectedProfile;
  files: ConfigFiles;
}

/** The config files for a workspace, found but not read. */
export function configFiles(workspace: string, userDir: string): ConfigFiles {
  const dotenv = join(workspace, '.env');
  return {
    user: locateConfigFile(userDir),
    workspace: locateConfigFile(join(workspace, '.hearth')),
    dotenv: { path: dotenv, exists: existsSync(dotenv) },
  };
}

/**
 * Merges, later wins: defaults, the user's file, the workspace's file, HEARTH_* variables from
 * the workspace's .env, HEARTH_* environment variables, flags. When the model named in the end is
 * a profile, its settings replace the top-level ones from the files; variables and flags still win.
 */
export async function loadConfig(sources: ConfigSources): Promise<LoadedConfig> {
  const env = sources.env ?? process.env;
  const files = configFiles(sources.workspace, sources.userDir ?? hearthHome(env));
  const fileLayers: Layer[] = [];
  for (const location of [files.user, files.workspace]) {
    const values = await readConfigFile(location);
    if (location.exists) fileLayers.push(fileLayer(location.path, values));
  }
  const overrides: Layer[] = [
    settingsLayer(files.dotenv.path, await dotenvSettings(files.dotenv.path), '.env '),
    settingsLayer('the environment', envSettings(env), 'env '),
    settingsLayer('the command line', sources.flags ?? [], ''),
  ];
  for (const layer of [...fileLayers, ...overrides]) {
    validateLayer(layer);
    normalizeSandbox(layer.values);
  }

  const merged: Record<string, unknown> = {};
  const provenance: Provenance = {};
  for (const layer of fileLayers) mergeLayer(merged, provenance, layer);
  const chooser = [...overrides].reverse().find((layer) => layer.values.model !== undefined);
  const name = chooser ? chooser.values.model : merged.model;
  const profile = findProfile(merged, name);
  let selected: SelectedProfile | undefined;
  if (profile && typeof name === 'string') {
    selected = { name, selectedBy: chooser ? chooser.label('model') : (provenance.model ?? 'default') };
    mergeLayer(merged, provenance, profileLayer(name, profile, provenance));
  }
  // Once a profile is chosen, the names that chose it must not replace the model it names.
  const skip = new Set(selected ? ['model'] : []);
  for (const layer of overrides) mergeLayer(merged, provenance, layer, skip);

  const config = parseMerged(merged, provenance);
  const keyed: Provenance = {};
  for (const [path] of leaves(config as Record<string, unknown>)) keyed[path] = provenance[path] ?? 'default';
  return { config, sources: keyed, profile: selected, files };
}

async function dotenvSettings(path: string): Promise<Setting[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR') return [];
    throw new ConfigError(`Cannot read ${path}: ${(err as Error).message}`);
  }
  return envSettings(parseDotenv(text));
}

/** `sandbox: "bwrap"` is short for `sandbox: {mode: "bwrap"}`; the long form merges key by key. */
function normalizeSandbox(values: Record<string, unknown>): void {
  if (typeof values.sandbox === 'string') values.sandbox = { mode: values.sandbox };
}

/**
 * Validates the merged settings as a whole. Each source was checked on its own already, so what
 * fails here spans sources (a profile completed nowhere); the error names the likeliest source.
 */
function parseMerged(merged: Record<string, unknown>, provenance: Provenance): Config {
  const result = configSchema.safeParse(merged);
  if (result.success) return result.data;
  const byOrigin = new Map<string, string[]>();
  for (const issue of result.error.issues) {
    const origin = likelySource(issue.path.map(String), provenance);
    const problems = describeIssues([issue], merged, configSchema);
    byOrigin.set(origin, [...(byOrigin.get(origin) ?? []), ...problems]);
  }
  const messages = [...byOrigin].map(([origin, problems]) => configError(origin, problems).message);
  throw new ConfigError(messages.join('\n'));
}

/** The source of the key nearest to a path: itself, something inside it, or a sibling's. */
function likelySource(path: string[], provenance: Provenance): string {
  for (let depth = path.length; depth > 0; depth--) {
    const prefix = path.slice(0, depth).join('.');
    for (const [key, source] of Object.entries(provenance))
      if (key === prefix || key.startsWith(`${prefix}.`) || prefix.startsWith(`${key}.`)) return source;
  }
  return 'the merged configuration';
}
