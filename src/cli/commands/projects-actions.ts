import { resolve } from 'node:path';
import type { Command } from 'commander';
import { hearthHome } from '../../config/load.js';
import {
  addProject,
  chooseProject,
  lastUsed,
  type ProjectDefaults,
  readProjects,
  writeProjects,
} from '../../config/projects.js';
import { checkWorkspace } from '../../config/workspace.js';
import type { GlobalFlags } from '../options.js';
import { terminalJson, visible } from '../sanitize.js';
import { UsageError } from '../usage-error.js';

const home = () => hearthHome(process.env);

/** `hearth projects [list]`: one line each, the last used marked. */
export async function listProjects(opts: { json?: boolean }): Promise<void> {
  const registry = await readProjects(home());
  const last = lastUsed(registry);
  if (opts.json) {
    const rows = registry.projects.map((p) => ({ ...p, last_used: p.name === last }));
    process.stdout.write(`${terminalJson({ projects: rows })}\n`);
    return;
  }
  if (registry.projects.length === 0) {
    process.stdout.write('No projects yet. Add one with: hearth projects add [DIR]\n');
    return;
  }
  for (const p of registry.projects) {
    const defaults = describeDefaults(p.defaults);
    process.stdout.write(
      `${p.name === last ? '*' : ' '} ${visible(p.name)}  ${visible(p.path)}${defaults ? `  ${visible(defaults)}` : ''}\n`,
    );
  }
}

export function describeDefaults(defaults: ProjectDefaults): string {
  const parts: string[] = [];
  if (defaults.model) parts.push(`model ${defaults.model}`);
  if (defaults.pipeline) parts.push(`pipeline ${JSON.stringify(defaults.pipeline)}`);
  return parts.join(' · ');
}

/** `hearth projects add [DIR]`: registers the folder with its defaults, checked as config. */
export async function addProjectCommand(
  dir: string | undefined,
  opts: { name?: string; set?: string[] },
  cmd: Command,
): Promise<void> {
  const globals = cmd.optsWithGlobals<GlobalFlags>();
  const path = await checkWorkspace(resolve(dir ?? globals.workspace));
  const defaults: ProjectDefaults = {};
  if (globals.model) defaults.model = globals.model;
  for (const item of opts.set ?? []) setPipelineKey(defaults, item);
  const registry = await readProjects(home());
  const project = addProject(registry, path, { name: opts.name, defaults, now: Date.now() });
  await writeProjects(home(), registry);
  process.stdout.write(`Added project ${visible(project.name)}: ${visible(path)}\n`);
}

/** "pipeline.max_rework=1" into the defaults; the value is JSON when it parses as JSON, else text. */
function setPipelineKey(defaults: ProjectDefaults, item: string): void {
  const at = item.indexOf('=');
  const key = at > 0 ? item.slice(0, at) : '';
  if (!key.startsWith('pipeline.') || key === 'pipeline.')
    throw new UsageError(
      `--set ${item}: give a pipeline setting as pipeline.KEY=VALUE (e.g. pipeline.max_rework=1).`,
    );
  const raw = item.slice(at + 1);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    // Plain text, as typed.
  }
  defaults.pipeline ??= {};
  let target = defaults.pipeline;
  const path = key.split('.').slice(1);
  for (const part of path.slice(0, -1)) {
    const next = target[part];
    const child = typeof next === 'object' && next !== null ? (next as Record<string, unknown>) : {};
    target[part] = child;
    target = child;
  }
  target[path.at(-1)!] = value;
}

export async function removeProject(name: string): Promise<void> {
  const registry = await readProjects(home());
  const at = registry.projects.findIndex((p) => p.name === name);
  if (at < 0) throw new UsageError(`No project named "${name}". See: hearth projects list`);
  registry.projects.splice(at, 1);
  await writeProjects(home(), registry);
  process.stdout.write(`Removed project ${visible(name)} (its folder is untouched).\n`);
}

export async function useProject(name: string): Promise<void> {
  const project = await chooseProject(home(), name, Date.now());
  process.stdout.write(
    `${visible(project.path)}\nNow the last-used project: hearth --project runs in it (or cd there).\n`,
  );
}
