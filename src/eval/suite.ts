/**
 * A suite is a folder of tasks; a task is a folder with `task.md` (the prompt), optional `files/`
 * (the starting workspace), `check` (run in the finished workspace: exit 0 passes) and optional
 * `eval.json` (limits and tags). The format is written down in docs/eval.md.
 */
import { access, readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { packageRoot } from '../util/package-root.js';

/** The same for every model: what one attempt may spend. */
export interface TaskLimits {
  /** Model turns (the run's max_iterations). */
  turns: number;
  /** Prompt + completion tokens over the attempt; undefined: no limit. */
  tokens?: number;
  /** Seconds before the attempt is stopped (the check then still runs). */
  seconds: number;
  /** A smaller window than the server's, for a task about working inside one (compaction, sub-agents). */
  window?: number;
}

export interface EvalTask {
  name: string;
  prompt: string;
  /** The starting workspace, when the task has one. */
  files?: string;
  check: string;
  limits: TaskLimits;
  tags: string[];
}

export class SuiteError extends Error {
  override name = 'SuiteError';
}

const DEFAULT_LIMITS: TaskLimits = { turns: 30, seconds: 600 };

const evalJson = z
  .object({
    turns: z.number().int().positive().optional(),
    tokens: z.number().int().positive().optional(),
    time: z.number().positive().optional(),
    window: z.number().int().min(2048).optional(),
    tags: z.array(z.string().min(1)).optional(),
  })
  .strict();

/** The suite that ships with Hearth (eval/builtin in the package). */
export function builtinSuitePath(): string {
  return join(packageRoot(import.meta.url), 'eval', 'builtin');
}

/** `builtin` or a folder, as the user named it, to the folder's absolute path. */
export function suitePath(suite: string, cwd: string): string {
  return suite === 'builtin' ? builtinSuitePath() : resolve(cwd, suite);
}

/** The tasks of a suite folder, by name; every problem with a task names its file. */
export async function loadSuite(dir: string): Promise<EvalTask[]> {
  let entries: string[];
  try {
    entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    throw new SuiteError(`No suite folder at ${dir}: give --suite builtin or a folder of task folders.`);
  }
  const tasks: EvalTask[] = [];
  for (const name of entries.sort()) {
    const task = await loadTask(join(dir, name), name);
    if (task) tasks.push(task);
  }
  if (tasks.length === 0)
    throw new SuiteError(
      `${dir} holds no tasks: each task is a folder with task.md and check (see docs/eval.md).`,
    );
  return tasks;
}

/** A task folder, or undefined for a folder without task.md (not a task). */
async function loadTask(dir: string, name: string): Promise<EvalTask | undefined> {
  const prompt = await readFile(join(dir, 'task.md'), 'utf8').catch(() => undefined);
  if (prompt === undefined) return undefined;
  if (prompt.trim() === '') throw new SuiteError(`${join(dir, 'task.md')} is empty.`);
  const check = join(dir, 'check');
  if (!(await exists(check)))
    throw new SuiteError(
      `Task ${name} has no check: add ${check}, a program whose exit code 0 means a pass.`,
    );
  const files = join(dir, 'files');
  const hasFiles = await stat(files).then(
    (s) => s.isDirectory(),
    () => false,
  );
  const { limits, tags } = await readLimits(join(dir, 'eval.json'));
  return { name, prompt: prompt.trim(), ...(hasFiles ? { files } : {}), check, limits, tags };
}

async function readLimits(file: string): Promise<{ limits: TaskLimits; tags: string[] }> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return { limits: DEFAULT_LIMITS, tags: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new SuiteError(`${file} is not JSON: ${(err as Error).message}`);
  }
  const parsed = evalJson.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`);
    throw new SuiteError(`${file}: ${problems.join('; ')} (keys: turns, tokens, time, window, tags)`);
  }
  const { turns, tokens, time, window, tags } = parsed.data;
  return {
    limits: {
      turns: turns ?? DEFAULT_LIMITS.turns,
      seconds: time ?? DEFAULT_LIMITS.seconds,
      ...(tokens ? { tokens } : {}),
      ...(window ? { window } : {}),
    },
    tags: tags ?? [],
  };
}

/** The tasks whose name (or a tag, as `tag:NAME`) matches one of the comma-separated globs. */
export function selectTasks(tasks: EvalTask[], globs: string | undefined): EvalTask[] {
  if (!globs) return tasks;
  const patterns = globs
    .split(',')
    .map((g) => g.trim())
    .filter(Boolean);
  const matches = picomatch(patterns);
  const chosen = tasks.filter((t) => matches(t.name) || t.tags.some((tag) => matches(`tag:${tag}`)));
  if (chosen.length === 0)
    throw new SuiteError(`No task matches --tasks ${globs}. Tasks: ${tasks.map((t) => t.name).join(', ')}.`);
  return chosen;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
