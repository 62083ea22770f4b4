import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { parseDotenv } from './dotenv.js';
import { ConfigError, configError, describeIssues } from './errors.js';
import { hashFiles, hookFiles } from './hook-files.js';
import type { HooksSettings } from './hooks-schema.js';
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
import { projectAt, projectLayer, readProjects } from './projects.js';
import { type Config, configSchema } from './schema.js';
import { type IgnoredSetting, withholdSecurity } from './security.js';
import {
  type ConfigFileLocation,
  envSettings,
  hearthHome,
  locateConfigFile,
  readConfigFile,
} from './sources.js';
import { trustState } from './trust.js';

export { ConfigError } from './errors.js';
export type { Setting as FlagSetting } from './layers.js';
export type { SelectedProfile } from './profiles.js';
export type { IgnoredSetting } from './security.js';
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
  /** Security settings the workspace's .env or its unapproved config file gave, which were not applied. */
  ignored: IgnoredSetting[];
  /** The registered project this workspace is (`hearth projects`), whose defaults were applied. */
  project?: string;
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

const DOTENV_REASON =
  'the workspace .env can be written by the commands Hearth runs, so it never sets security settings; ' +
  'set them in ~/.hearth/config.json, the environment or a flag';

/**
 * Merges, later wins: defaults, the user's file, the workspace's file, a registered project's
 * defaults (projects.ts), HEARTH_* variables from the workspace's .env, HEARTH_* environment
 * variables, flags. When the model named in the end is
 * a profile, its settings replace the top-level ones from the files; variables and flags still win.
 * The workspace's sources do not set security settings (security.ts) unless the user approved the
 * workspace's file; what they tried is returned in `ignored`.
 */
export async function loadConfig(sources: ConfigSources): Promise<LoadedConfig> {
  const env = sources.env ?? process.env;
  const userDir = sources.userDir ?? hearthHome(env);
  const files = configFiles(sources.workspace, userDir);
  const fileLayers: Layer[] = [];
  const ignored: IgnoredSetting[] = [];
  for (const location of [files.user, files.workspace]) {
    // A workspace that is the home directory has one .hearth for both: it is the user's own file.
    if (location === files.workspace && location.path === files.user.path) continue;
    const { values, text } = await readConfigFile(location);
    if (!location.exists) continue;
    const layer = fileLayer(location.path, values);
    validateLayer(layer);
    normalizeSandbox(layer.values);
    if (location === files.workspace)
      ignored.push(...(await withholdUnapproved(layer, userDir, text, sources.workspace)));
    fileLayers.push(layer);
  }
  // A registered project's defaults (its model profile, pipeline settings) come after the files.
  const project = projectAt(await readProjects(userDir), sources.workspace);
  if (project) fileLayers.push(projectLayer(project));
  const dotenv = settingsLayer(files.dotenv.path, await dotenvSettings(files.dotenv.path), '.env ');
  const overrides: Layer[] = [
    dotenv,
    settingsLayer('the environment', envSettings(env), 'env '),
    settingsLayer('the command line', sources.flags ?? [], ''),
  ];
  for (const layer of overrides) {
    validateLayer(layer);
    normalizeSandbox(layer.values);
  }
  ignored.push(...withholdSecurity(dotenv, DOTENV_REASON));

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
  return {
    config,
    sources: keyed,
    profile: selected,
    files,
    ignored,
    ...(project ? { project: project.name } : {}),
  };
}

/**
 * The project file's security settings, unless the user approved this very content; its hooks also
 * unless the workspace files they run are as they were when approved (hook-files.ts).
 */
async function withholdUnapproved(
  layer: Layer,
  userDir: string,
  text: string,
  workspace: string,
): Promise<IgnoredSetting[]> {
  const { state, hookFiles: approved } = await trustState(userDir, layer.origin, text);
  if (state === 'trusted') {
    const named = hookFiles(layer.values.hooks as HooksSettings | undefined, workspace);
    const now = await hashFiles(named);
    const changed = named.filter((file) => approved[file] !== now[file]);
    if (changed.length === 0) return [];
    const hooksOnly: Layer = { ...layer, values: { hooks: layer.values.hooks } };
    delete layer.values.hooks;
    return withholdSecurity(
      hooksOnly,
      `the workspace files its hooks run changed since you approved it (${changed.map((f) => relative(workspace, f)).join(', ')}), and commands can write them. Check them, then run \`hearth config trust\` again`,
    );
  }
  const why =
    state === 'changed'
      ? 'it changed since you approved it, and only the approved content may set security settings'
      : 'project files set security settings only once you approve them, since commands can write them';
  return withholdSecurity(layer, `${why}. Check the file, then run \`hearth config trust\` to approve it`);
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
