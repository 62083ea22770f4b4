import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import { type Config, type ConfigInput, configSchema } from './schema.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface ConfigSources {
  workspace: string;
  /** Values from command-line flags; undefined entries are ignored. */
  flags?: ConfigInput;
  env?: NodeJS.ProcessEnv;
  /** Directory holding the user's config.json; default ~/.hearth. */
  userDir?: string;
}

/** Environment variables that map onto config keys. */
const ENV_KEYS: Record<string, keyof ConfigInput> = {
  HEARTH_BASE_URL: 'base_url',
  HEARTH_MODEL: 'model',
  HEARTH_API_KEY: 'api_key',
  HEARTH_MAX_ITERATIONS: 'max_iterations',
  HEARTH_TIMEOUT: 'timeout',
  HEARTH_CONTEXT_WINDOW: 'context_window',
  HEARTH_DB: 'db_path',
};

/** Where Hearth keeps its user-level files: $HEARTH_HOME, else ~/.hearth. */
export function hearthHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.HEARTH_HOME || join(homedir(), '.hearth');
}

/** Merges, later wins: defaults, user file, workspace file, HEARTH_* env, flags. */
export async function loadConfig(sources: ConfigSources): Promise<Config> {
  const env = sources.env ?? process.env;
  const userFile = join(sources.userDir ?? hearthHome(env), 'config.json');
  const projectFile = join(sources.workspace, '.hearth', 'config.json');
  const layers: Array<[string, Record<string, unknown>]> = [
    [userFile, await readJsonFile(userFile)],
    [projectFile, await readJsonFile(projectFile)],
    ['environment', fromEnv(env)],
    ['command line', stripUndefined(sources.flags ?? {})],
  ];
  const merged: Record<string, unknown> = {};
  for (const [origin, layer] of layers) {
    check(configSchema.partial(), layer, origin);
    Object.assign(merged, layer);
  }
  return check(configSchema, merged, 'configuration');
}

async function readJsonFile(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(`Cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    const value = JSON.parse(text) as unknown;
    if (!value || typeof value !== 'object' || Array.isArray(value))
      throw new Error('expected a JSON object');
    return value as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(`${path} is not valid JSON: ${(err as Error).message}`);
  }
}

function fromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    out[key] = /^(max_iterations|timeout|context_window)$/.test(key) ? Number(value) : value;
  }
  return out;
}

function stripUndefined(input: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
}

function check<S extends z.ZodType>(schema: S, value: unknown, origin: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const key = issue.path.join('.') || '(root)';
    return issue.code === 'unrecognized_keys'
      ? `unknown key(s): ${issue.keys.join(', ')}`
      : `${key}: ${issue.message}`;
  });
  throw new ConfigError(`Invalid configuration in ${origin}:\n  ${problems.join('\n  ')}`);
}
