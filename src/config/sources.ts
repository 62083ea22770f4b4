import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from './errors.js';
import type { Setting } from './layers.js';

/** Where Hearth keeps its user-level files: $HEARTH_HOME, else ~/.hearth. */
export function hearthHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.HEARTH_HOME || join(homedir(), '.hearth');
}

/** The session database: `db_path` from the config, else hearth.db in the Hearth home. */
export function defaultDbPath(config: { db_path?: string }, env: NodeJS.ProcessEnv = process.env): string {
  return config.db_path ?? join(hearthHome(env), 'hearth.db');
}

const CONFIG_NAMES = ['config.json', 'config.yaml', 'config.yml'];

export interface ConfigFileLocation {
  /** The file in use, or config.json when none exists yet (where one would be created). */
  path: string;
  exists: boolean;
  /** Every config file present in the folder; more than one is an error when loading. */
  found: string[];
}

/** Finds the config file in a folder (~/.hearth or <workspace>/.hearth). */
export function locateConfigFile(dir: string): ConfigFileLocation {
  const found = CONFIG_NAMES.map((name) => join(dir, name)).filter((path) => existsSync(path));
  return { path: found[0] ?? join(dir, CONFIG_NAMES[0]!), exists: found.length > 0, found };
}

/** A config file's settings, with the exact text they were parsed from (for its approval, trust.ts). */
export interface ConfigFileContent {
  values: Record<string, unknown>;
  text: string;
}

/** Reads a folder's config file as a plain object; {} when there is none. */
export async function readConfigFile(location: ConfigFileLocation): Promise<ConfigFileContent> {
  if (location.found.length > 1) {
    throw new ConfigError(
      `Found both ${location.found.join(' and ')}: keep one of them (Hearth will not guess which wins).`,
    );
  }
  if (!location.exists) return { values: {}, text: '' };
  const path = location.path;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`Cannot read ${path}: ${(err as Error).message}`);
  }
  if (text.trim() === '') return { values: {}, text };
  const value = path.endsWith('.json') ? parseJson(text, path) : await parseYamlText(text, path);
  if (value === null || value === undefined) return { values: {}, text };
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError(
      `Invalid configuration in ${path}: expected an object of settings such as {"model": "..."} at the top, got ${Array.isArray(value) ? 'a list' : typeof value}.`,
    );
  }
  return { values: value as Record<string, unknown>, text };
}

function parseJson(text: string, path: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    const position = /position (\d+)/.exec(message);
    const where = position ? ` (${lineAndColumn(text, Number(position[1]))})` : '';
    throw new ConfigError(`${path} is not valid JSON${where}: ${message}`);
  }
}

async function parseYamlText(text: string, path: string): Promise<unknown> {
  const { parseYaml } = await import('./yaml.js');
  try {
    return parseYaml(text);
  } catch (err) {
    throw new ConfigError(`${path} is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
}

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

type EnvKind = 'string' | 'number' | 'boolean';

/** The HEARTH_* variables that set config keys, and how their text is read. */
const ENV_VARS: Record<string, { key: string; kind: EnvKind }> = {
  HEARTH_BASE_URL: { key: 'base_url', kind: 'string' },
  HEARTH_MODEL: { key: 'model', kind: 'string' },
  HEARTH_API_KEY: { key: 'api_key', kind: 'string' },
  HEARTH_MAX_ITERATIONS: { key: 'max_iterations', kind: 'number' },
  HEARTH_TIMEOUT: { key: 'timeout', kind: 'number' },
  HEARTH_IDLE_TIMEOUT: { key: 'idle_timeout', kind: 'number' },
  HEARTH_FIRST_BYTE_TIMEOUT: { key: 'first_byte_timeout', kind: 'number' },
  HEARTH_MAX_RETRIES: { key: 'max_retries', kind: 'number' },
  HEARTH_TEMPERATURE: { key: 'temperature', kind: 'number' },
  HEARTH_TOP_P: { key: 'top_p', kind: 'number' },
  HEARTH_SEED: { key: 'seed', kind: 'number' },
  HEARTH_REPETITION_PENALTY: { key: 'repetition_penalty', kind: 'number' },
  HEARTH_MAX_TOKENS: { key: 'max_tokens', kind: 'number' },
  HEARTH_CONTEXT_WINDOW: { key: 'context_window', kind: 'number' },
  HEARTH_NATIVE_TOOLS: { key: 'native_tools', kind: 'boolean' },
  HEARTH_TOKEN_BUDGET: { key: 'token_budget', kind: 'number' },
  HEARTH_PERMISSION_MODE: { key: 'permissions.mode', kind: 'string' },
  HEARTH_SANDBOX: { key: 'sandbox.mode', kind: 'string' },
  HEARTH_DB: { key: 'db_path', kind: 'string' },
  HEARTH_DATABASE_URL: { key: 'storage', kind: 'string' },
  HEARTH_CHROMIUM: { key: 'web.browser', kind: 'string' },
  HEARTH_EMBEDDING_MODEL: { key: 'memory.embedding_model', kind: 'string' },
  HEARTH_GATEWAY_TOKEN: { key: 'gateway.token', kind: 'string' },
};

/**
 * The settings a set of variables carries. Text that does not read as the key's type is passed
 * on as text, so that validation reports it with the variable's name and value.
 */
export function envSettings(vars: Record<string, string | undefined>): Setting[] {
  const out: Setting[] = [];
  for (const [name, { key, kind }] of Object.entries(ENV_VARS)) {
    const text = vars[name]?.trim();
    if (text === undefined || text === '') continue;
    out.push({ name, key, value: coerce(text, kind) });
  }
  return out;
}

function coerce(text: string, kind: EnvKind): unknown {
  if (kind === 'number') {
    const n = Number(text);
    return Number.isFinite(n) ? n : text;
  }
  if (kind === 'boolean') {
    if (/^(1|true|yes|on)$/i.test(text)) return true;
    if (/^(0|false|no|off)$/i.test(text)) return false;
  }
  return text;
}
