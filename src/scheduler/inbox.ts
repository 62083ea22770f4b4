import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * The inbox folder (`~/.hearth/inbox/`): a task is a file. `hearth submit` writes
 * `<time>-<id>.json` ({"task", "workspace"}); any `.txt` or `.md` file dropped in is a task too,
 * run in the scheduler's workspace. Taking a task is a rename into `running/`, which exactly one
 * process wins; when the run ends the file moves to `done/` or `failed/`, next to a
 * `<name>.result.json` that points at the session.
 */
export class Inbox {
  constructor(readonly dir: string) {}

  private sub(name: 'running' | 'done' | 'failed'): string {
    return join(this.dir, name);
  }

  /** Queues a task; written aside and renamed, so the scheduler never reads half a file. */
  async submit(task: string, workspace: string | undefined, now: number): Promise<string> {
    await mkdir(this.dir, { recursive: true });
    const stamp = new Date(now)
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z');
    const name = `${stamp}-${randomBytes(3).toString('hex')}.json`;
    const temp = join(this.dir, `.${name}.tmp`);
    await writeFile(temp, `${JSON.stringify({ task, ...(workspace ? { workspace } : {}) }, null, 2)}\n`);
    await rename(temp, join(this.dir, name));
    return name;
  }

  /** Task files waiting, oldest name first (names start with the time for `submit`'s). */
  async waiting(): Promise<string[]> {
    return (await files(this.dir)).filter(isTaskFile).sort();
  }

  /** Moves a waiting file into `running/`; false when another process took it first. */
  async claim(name: string): Promise<boolean> {
    await mkdir(this.sub('running'), { recursive: true });
    try {
      await rename(join(this.dir, name), join(this.sub('running'), name));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  }

  /** Files in `running/`: taken by a scheduler, not yet settled. */
  async running(): Promise<string[]> {
    return (await files(this.sub('running'))).filter(isTaskFile).sort();
  }

  /** The task a claimed file holds; an unreadable one is an error message for the run record. */
  async read(
    name: string,
    defaultWorkspace: string,
  ): Promise<{ task: string; workspace: string } | { error: string }> {
    const path = join(this.sub('running'), name);
    const info = await stat(path).catch(() => undefined);
    if (!info) return { error: `${path} is gone` };
    if (info.size > MAX_TASK_BYTES)
      return { error: `the file is over ${MAX_TASK_BYTES / 1024} KB; a task is a short text` };
    const text = await readFile(path, 'utf8');
    if (!name.endsWith('.json'))
      return text.trim()
        ? { task: text.trim(), workspace: defaultWorkspace }
        : { error: 'the file is empty' };
    let parsed: { task?: unknown; workspace?: unknown };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch (err) {
      return {
        error: `not valid JSON (${(err as Error).message}); write {"task": "...", "workspace": "/path"}`,
      };
    }
    if (typeof parsed.task !== 'string' || !parsed.task.trim())
      return { error: 'no "task" text; write {"task": "...", "workspace": "/path"}' };
    if (
      parsed.workspace !== undefined &&
      (typeof parsed.workspace !== 'string' || !isAbsolute(parsed.workspace))
    )
      return { error: '"workspace" must be an absolute path' };
    return {
      task: parsed.task.trim(),
      workspace: parsed.workspace ? resolve(parsed.workspace) : defaultWorkspace,
    };
  }

  /** Moves a finished task to `done/` or `failed/`, with the pointer to what happened beside it. */
  async settle(name: string, result: InboxResult): Promise<void> {
    const target = this.sub(result.status === 'ok' ? 'done' : 'failed');
    await mkdir(target, { recursive: true });
    await writeFile(join(target, `${name}.result.json`), `${JSON.stringify(result, null, 2)}\n`);
    await rename(join(this.sub('running'), name), join(target, name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  /** Every task by where it is, for `hearth inbox`. */
  async list(): Promise<Record<'waiting' | 'running' | 'done' | 'failed', string[]>> {
    const [waiting, running, done, failed] = await Promise.all([
      this.waiting(),
      this.running(),
      files(this.sub('done')).then((names) => names.filter(isTaskFile).sort()),
      files(this.sub('failed')).then((names) => names.filter(isTaskFile).sort()),
    ]);
    return { waiting, running, done, failed };
  }
}

export interface InboxResult {
  status: 'ok' | 'failed';
  /** The session the task ran in: `hearth sessions show ID`, `hearth --resume ID`. */
  session?: string;
  reason?: string;
  run: number;
  finished_at: string;
}

const MAX_TASK_BYTES = 256 * 1024;

function isTaskFile(name: string): boolean {
  return !name.startsWith('.') && /\.(json|txt|md)$/.test(name) && !name.endsWith('.result.json');
}

async function files(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isFile()).map((e) => e.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
