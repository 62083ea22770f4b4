import { relative, resolve } from 'node:path';
import { hashFiles, hookFiles } from '../../config/hook-files.js';
import type { HooksSettings } from '../../config/hooks-schema.js';
import { fileLayer } from '../../config/layers.js';
import { ConfigError, configFiles, hearthHome, type LoadedConfig } from '../../config/load.js';
import { configSchema } from '../../config/schema.js';
import { describeIgnored, withholdSecurity } from '../../config/security.js';
import { readConfigFile } from '../../config/sources.js';
import { revokeProject, trustProject } from '../../config/trust.js';
import { checkWorkspace } from '../../config/workspace.js';
import { type GlobalFlags, loadConfigFromFlags } from '../options.js';

/** `hearth config show`: every setting with where it came from. */
export async function showConfig(flags: GlobalFlags & { json?: boolean }): Promise<void> {
  const loaded = await loadConfigFromFlags(flags);
  process.stdout.write(flags.json ? `${JSON.stringify(showJson(loaded), null, 2)}\n` : showText(loaded));
}

/** `hearth config trust [--revoke]`: approves (or withdraws approval of) the workspace's config file as it is now. */
export async function trustConfig(flags: GlobalFlags, revoke: boolean): Promise<void> {
  const userDir = hearthHome();
  const location = configFiles(resolve(flags.workspace), userDir).workspace;
  if (revoke) {
    const had = await revokeProject(userDir, location.path);
    process.stdout.write(
      had ? `Approval of ${location.path} withdrawn.\n` : `${location.path} was not approved.\n`,
    );
    return;
  }
  if (!location.exists)
    throw new ConfigError(`No project config file here (${location.path}); nothing to approve.`);
  // What is approved is said first: the file may hold settings the user has not read.
  const { values } = await readConfigFile(location);
  const layer = fileLayer(location.path, values);
  const workspace = await checkWorkspace(resolve(flags.workspace));
  const pinned = hookFiles(values.hooks as HooksSettings | undefined, workspace);
  const security = withholdSecurity(layer, '').map((i) => i.key);
  await trustProject(userDir, location.path, await hashFiles(pinned));
  process.stdout.write(
    `Approved ${location.path} as it is now.\n` +
      (pinned.length > 0
        ? `Approved with it, as they are now, the workspace files its hooks run: ${pinned.map((f) => relative(workspace, f)).join(', ')}.\n`
        : '') +
      (security.length > 0
        ? `Its security settings now apply: ${security.join(', ')}.\n`
        : 'It sets no security settings at the moment.\n') +
      'Any change to the file needs `hearth config trust` again; until then its security settings are ignored.\n',
  );
}

/** `hearth config path`: where the config files are and whether each exists. */
export function printConfigPaths(flags: GlobalFlags & { json?: boolean }): void {
  const files = configFiles(resolve(flags.workspace), hearthHome());
  const rows = [
    { name: 'user', path: files.user.path, exists: files.user.exists, also: files.user.found.slice(1) },
    {
      name: 'workspace',
      path: files.workspace.path,
      exists: files.workspace.exists,
      also: files.workspace.found.slice(1),
    },
    { name: '.env', path: files.dotenv.path, exists: files.dotenv.exists, also: [] },
  ];
  if (flags.json) {
    const json = Object.fromEntries(rows.map((r) => [r.name, { path: r.path, exists: r.exists }]));
    process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
    return;
  }
  const width = Math.max(...rows.map((r) => r.path.length));
  for (const row of rows) {
    const state = row.exists ? 'exists' : 'not found';
    const clash = row.also.length ? `  (also ${row.also.join(', ')}: keep only one)` : '';
    process.stdout.write(`${row.name.padEnd(10)} ${row.path.padEnd(width)}  ${state}${clash}\n`);
  }
}

/** Top-level keys that, unset, are worth listing: Hearth fills them in at run time. */
const SHOWN_WHEN_UNSET = ['base_url', 'model', 'max_iterations', 'context_window'];

function showText(loaded: LoadedConfig): string {
  const rows: Array<[string, string, string]> = [];
  const values = masked(loaded.config) as Record<string, unknown>;
  for (const key of Object.keys(configSchema.shape)) {
    const value = values[key];
    if (value === undefined) {
      if (SHOWN_WHEN_UNSET.includes(key)) rows.push([key, '(not set)', unsetNote(key)]);
      continue;
    }
    for (const [path, leaf] of leavesOf(key, value))
      rows.push([path, display(leaf), loaded.sources[path] ?? 'default']);
  }
  const width = Math.min(60, Math.max(...rows.map(([k, v]) => k.length + v.length + 3)));
  const lines = rows.map(([k, v, source]) => `${`${k} = ${v}`.padEnd(width)}   (${source})`);
  const header = loaded.profile
    ? [`# profile ${loaded.profile.name} (selected by ${loaded.profile.selectedBy})`]
    : [];
  const ignored = describeIgnored(loaded.ignored).map((line) => `# ${line}`);
  return `${[...header, ...lines, ...ignored].join('\n')}\n`;
}

function unsetNote(key: string): string {
  if (key === 'base_url') return 'found at run time: LM Studio, Ollama, llama.cpp, vLLM';
  if (key === 'model') return "the server's loaded or first chat model";
  if (key === 'max_iterations') return 'default: 50, or 500 with --deep';
  return 'asked of the server, else 8192';
}

function leavesOf(path: string, value: unknown): Array<[string, unknown]> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [[path, value]];
  return Object.entries(value).flatMap(([k, v]) => (v === undefined ? [] : leavesOf(`${path}.${k}`, v)));
}

function display(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function showJson(loaded: LoadedConfig) {
  return {
    config: masked(loaded.config),
    sources: loaded.sources,
    profile: loaded.profile ?? null,
    ignored: loaded.ignored,
  };
}

/** A copy with every api_key masked: the output is meant to be pasted into bug reports. */
function masked(value: unknown, key = ''): unknown {
  if (key === 'api_key' && typeof value === 'string') return maskSecret(value);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, masked(v, k)]));
}

function maskSecret(secret: string): string {
  return secret.length > 12 ? `${secret.slice(0, 3)}…${'*'.repeat(4)}` : '****';
}
