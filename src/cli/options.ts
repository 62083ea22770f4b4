import { resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { isPermissionMode, type PermissionMode } from '../permissions/modes.js';
import { createRuntime, type Runtime } from './runtime.js';

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
}

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive whole number');
  return n;
}

export function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number');
  return n;
}

/** Collects a repeatable option's values. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function parsePermissionMode(value: string): PermissionMode {
  if (isPermissionMode(value)) return value;
  throw new InvalidArgumentError(`Unknown permission mode "${value}": use auto, normal, manual or plan.`);
}

export function nameList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Loads the config with the flags as the last layer, and builds the runtime from it. */
export async function runtimeFromFlags(flags: GlobalFlags): Promise<Runtime> {
  const workspace = resolve(flags.workspace);
  const config: Config = await loadConfig({
    workspace,
    flags: {
      model: flags.model,
      base_url: flags.baseUrl,
      api_key: flags.apiKey,
      max_iterations: flags.maxIterations,
      timeout: flags.timeout,
      db_path: flags.db,
    },
  });
  // The flag names the whole set: it wins over both lists from config files.
  if (flags.tools) config.tools = { enabled: flags.tools };
  const permissions = config.permissions;
  if (flags.permissionMode) permissions.mode = parsePermissionMode(flags.permissionMode);
  if (flags.yolo) permissions.mode = 'auto';
  permissions.allow.push(...(flags.allow ?? []));
  permissions.deny.push(...(flags.deny ?? []));
  return createRuntime(config, workspace);
}
