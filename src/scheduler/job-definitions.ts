import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { trustState } from '../config/trust.js';
import { JobDefinitionError } from './errors.js';
import { parseSchedule, type Schedule, ScheduleError } from './schedule.js';

/**
 * What a job is, as written in `cron.json` (the seed's fields plus ours) or given to
 * `hearth jobs add`. Files are read fresh on every load; a job's progress lives in the store.
 */
export const jobInputSchema = z
  .object({
    id: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'letters, digits, "-", "_" and "." only, at most 64')
      .optional(),
    name: z.string().min(1),
    schedule: z.string().min(1),
    prompt: z.string().min(1),
    /** A session to continue on each run: an existing id, or a name for the job's own session. */
    session_id: z.string().min(1).optional(),
    workspace: z.string().min(1).optional(),
    model: z.string().min(1).optional(),
    enabled: z.boolean().default(true),
    /** IANA zone for cron and `daily` times; default the machine's. */
    timezone: z.string().min(1).optional(),
    /** Runs missed while no scheduler ran: none, the latest one, or each of them (at most MAX_CATCH_UP). */
    catch_up: z.enum(['skip', 'once', 'all']).default('once'),
    /** A slot that comes while the job's previous run still goes: skip it, or run it right after. */
    overlap: z.enum(['skip', 'queue']).default('skip'),
    /**
     * Where its scheduled runs go: `here` (the scheduler's process) or `queue` (the shared
     * PostgreSQL queue, run by a `hearth worker`). Default: `queue` when it has tags, else the
     * config's `scheduler.run_on`.
     */
    run_on: z.enum(['here', 'queue']).optional(),
    /** On the queue, only a worker with all of these tags runs it (`hearth worker --tags gpu`). */
    tags: z
      .array(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/, 'a tag: letters, digits, "-", "_", "."'))
      .max(8)
      .optional(),
  })
  .strict();

export type JobInput = z.input<typeof jobInputSchema>;

export interface JobDefinition {
  id: string;
  name: string;
  schedule: Schedule;
  prompt: string;
  sessionId?: string;
  /** Absolute path of the folder the job runs in. */
  workspace: string;
  model?: string;
  enabled: boolean;
  timezone?: string;
  catchUp: 'skip' | 'once' | 'all';
  overlap: 'skip' | 'queue';
  /** As written; `runsOnQueue` decides with the config's default. */
  runOn?: 'here' | 'queue';
  tags: string[];
  /** The cron.json it came from, or `cli` for jobs added with `hearth jobs add` (kept in the store). */
  source: string;
  /** The entry as written, for the store (CLI jobs) and for display. */
  input: z.output<typeof jobInputSchema>;
}

/** At most this many missed runs are made up with `catch_up: all`; older ones are recorded as skipped. */
export const MAX_CATCH_UP = 24;

/** Checks one entry; `defaultWorkspace` is used when it names none. */
export function defineJob(entry: unknown, source: string, defaultWorkspace: string): JobDefinition {
  const parsed = jobInputSchema.safeParse(entry);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'entry'}: ${i.message}`);
    throw new JobDefinitionError(issues.join('; '));
  }
  const input = parsed.data;
  let schedule: Schedule;
  try {
    schedule = parseSchedule(input.schedule, input.timezone);
  } catch (err) {
    if (err instanceof ScheduleError) throw new JobDefinitionError(err.message);
    throw err;
  }
  const id = input.id ?? slug(input.name);
  if (!id) throw new JobDefinitionError('give the job an "id" (letters, digits, "-", "_").');
  return {
    id,
    name: input.name,
    schedule,
    prompt: input.prompt,
    sessionId: input.session_id,
    workspace: input.workspace ? expandHome(input.workspace, defaultWorkspace) : defaultWorkspace,
    model: input.model,
    enabled: input.enabled,
    timezone: input.timezone,
    catchUp: input.catch_up,
    overlap: input.overlap,
    ...(input.run_on ? { runOn: input.run_on } : {}),
    tags: [...new Set(input.tags ?? [])].sort(),
    source,
    input: { ...input, id },
  };
}

/** Whether a job's scheduled runs go to the shared queue, given the config's `scheduler.run_on`. */
export function runsOnQueue(job: JobDefinition, defaultRunOn: 'here' | 'queue'): boolean {
  return (job.runOn ?? (job.tags.length > 0 ? 'queue' : defaultRunOn)) === 'queue';
}

function slug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
}

function expandHome(path: string, base: string): string {
  if (path === '~' || path.startsWith('~/')) return join(homedir(), path.slice(1));
  return isAbsolute(path) ? path : resolve(base, path);
}

export interface JobFiles {
  /** `~/.hearth/cron.json` (or under HEARTH_HOME). */
  user: string;
  /** `<workspace>/.hearth/cron.json`, read only once the user approved its content. */
  workspace: string;
  workspaceDir: string;
  /** The user's Hearth home, where approvals are kept. */
  userDir: string;
}

export interface LoadedJobs {
  jobs: JobDefinition[];
  /** What could not be loaded, one line each, naming the file and the entry. */
  problems: string[];
}

/**
 * Reads both files. A workspace file can be written by the commands the agent runs, and a job is
 * an agent run with the user's permissions on a timer; so its jobs load only after
 * `hearth jobs trust` approved exactly this content (as `hearth config trust` does for config).
 */
export async function loadJobFiles(files: JobFiles): Promise<LoadedJobs> {
  const out: LoadedJobs = { jobs: [], problems: [] };
  await readJobFile(files.user, files.workspaceDir, out, undefined);
  await readJobFile(files.workspace, files.workspaceDir, out, files.userDir);
  return out;
}

async function readJobFile(
  path: string,
  workspaceDir: string,
  out: LoadedJobs,
  trustDir: string | undefined,
): Promise<void> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      out.problems.push(`${path}: ${(err as Error).message}`);
    return;
  }
  if (trustDir !== undefined) {
    const { state } = await trustState(trustDir, path, text);
    if (state !== 'trusted') {
      out.problems.push(
        `${path}: not loaded: its jobs run ${state === 'changed' ? 'and it changed since you approved it' : 'only once you approve them'}. Review it, then: hearth jobs trust`,
      );
      return;
    }
  }
  let entries: unknown;
  try {
    entries = JSON.parse(text);
  } catch (err) {
    out.problems.push(`${path}: not valid JSON (${(err as Error).message})`);
    return;
  }
  if (!Array.isArray(entries)) {
    out.problems.push(`${path}: expected a JSON array of jobs, as in [{"id": ..., "schedule": ...}]`);
    return;
  }
  entries.forEach((entry, index) => {
    try {
      const job = defineJob(entry, path, workspaceDir);
      if (trustDir !== undefined && entry.workspace !== undefined && job.workspace !== workspaceDir) {
        throw new JobDefinitionError(
          `a project's jobs run in the project (${workspaceDir}); move this one to the user's cron.json`,
        );
      }
      const clash = out.jobs.find((j) => j.id === job.id);
      if (clash) throw new JobDefinitionError(`id "${job.id}" is taken by a job in ${clash.source}`);
      out.jobs.push(job);
    } catch (err) {
      if (!(err instanceof JobDefinitionError)) throw err;
      out.problems.push(`${path}, job ${index + 1}: ${err.message}`);
    }
  });
}
