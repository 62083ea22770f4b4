/**
 * The projects registry (`hearth projects`, `/project`, `--project`): named workspaces with their
 * own defaults (a model profile, pipeline settings) and the one used last.
 *
 * Its home is `<hearth home>/projects.json`, not the Storage: a project is a folder on this
 * machine, while a PostgreSQL store is shared by many machines whose folders differ; and its
 * defaults are a config layer, needed before the config (which names the store) is complete.
 * LAO kept the same registry in ~/.lao/projects.json. The file is the user's own, like
 * ~/.hearth/config.json, so its defaults are as trusted as that file's.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ConfigError } from './errors.js';
import { fileLayer, type Layer, validateLayer } from './layers.js';

export interface ProjectDefaults {
  /** A model or a profile name from `models` in the config. */
  model?: string;
  /** Settings of the plan pipeline (`pipeline` in a config file). */
  pipeline?: Record<string, unknown>;
}

export interface Project {
  name: string;
  /** The workspace's real path. */
  path: string;
  defaults: ProjectDefaults;
  added: number;
  /** When `hearth projects use`, `--project` or `/project` last chose it. */
  usedAt?: number;
}

export interface ProjectRegistry {
  projects: Project[];
}

function projectsFile(home: string): string {
  return join(home, 'projects.json');
}

/** The registry; empty when there is no file yet. A file that is not a registry is an error naming it. */
export async function readProjects(home: string): Promise<ProjectRegistry> {
  const path = projectsFile(home);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { projects: [] };
    throw new ConfigError(`Cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as ProjectRegistry;
    if (!Array.isArray(parsed.projects)) throw new Error('no "projects" list');
    return parsed;
  } catch (err) {
    throw new ConfigError(
      `${path} is not a projects registry (${(err as Error).message}). Fix or remove it.`,
    );
  }
}

export async function writeProjects(home: string, registry: ProjectRegistry): Promise<void> {
  const path = projectsFile(home);
  await mkdir(home, { recursive: true });
  // Written aside and renamed, so a crash leaves the old registry rather than half a file.
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(registry, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, path);
}

/** The project registered for this workspace (a real path), if any. */
export function projectAt(registry: ProjectRegistry, workspace: string): Project | undefined {
  return registry.projects.find((p) => p.path === workspace);
}

const PROJECT_NAME = /^[\w.-]+$/;

/** A project by name, or the last used when `name` is undefined; a ConfigError says what exists. */
function findProject(registry: ProjectRegistry, name: string | undefined): Project {
  const { projects } = registry;
  if (projects.length === 0)
    throw new ConfigError('No projects registered yet. Add one with: hearth projects add [DIR]');
  if (name === undefined) {
    const last = [...projects].filter((p) => p.usedAt).sort((a, b) => b.usedAt! - a.usedAt!)[0];
    if (!last) throw new ConfigError('No project was used yet. Choose one: hearth projects use NAME');
    return last;
  }
  const found = projects.find((p) => p.name === name);
  if (found) return found;
  // `hearth --project "fix the tests"`: the option's optional value took the task.
  const taskHint = PROJECT_NAME.test(name)
    ? ''
    : ` With the last-used project, give the task after --: hearth --project -- "${name}"`;
  throw new ConfigError(
    `No project named "${name}". Projects: ${projects.map((p) => p.name).join(', ')} (hearth projects list).${taskHint}`,
  );
}

/** The last-used project's name, for marking it in lists. */
export function lastUsed(registry: ProjectRegistry): string | undefined {
  return [...registry.projects].filter((p) => p.usedAt).sort((a, b) => b.usedAt! - a.usedAt!)[0]?.name;
}

/** The defaults as a config layer labelled `project NAME`; invalid ones are a ConfigError naming the project. */
export function projectLayer(project: Project): Layer {
  const values: Record<string, unknown> = {};
  if (project.defaults.model !== undefined) values.model = project.defaults.model;
  if (project.defaults.pipeline !== undefined) values.pipeline = structuredClone(project.defaults.pipeline);
  const layer = fileLayer(`project ${project.name}`, values);
  validateLayer(layer);
  return layer;
}

/** A new project entry; a name or path already registered is a ConfigError. */
export function addProject(
  registry: ProjectRegistry,
  path: string,
  options: { name?: string; defaults: ProjectDefaults; now: number },
): Project {
  const name = options.name ?? basename(path);
  if (!PROJECT_NAME.test(name))
    throw new ConfigError(`"${name}" cannot name a project: use letters, digits, ".", "_" and "-".`);
  const byName = registry.projects.find((p) => p.name === name);
  if (byName) throw new ConfigError(`A project named "${name}" exists already (${byName.path}).`);
  const byPath = projectAt(registry, path);
  if (byPath) throw new ConfigError(`${path} is registered already, as "${byPath.name}".`);
  const project: Project = { name, path, defaults: options.defaults, added: options.now };
  projectLayer(project);
  registry.projects.push(project);
  return project;
}

/** Chooses a project (by name, or the last used) and records it as the last used. */
export async function chooseProject(home: string, name: string | undefined, now: number): Promise<Project> {
  const registry = await readProjects(home);
  const project = findProject(registry, name);
  project.usedAt = now;
  await writeProjects(home, registry);
  return project;
}
