import { join } from 'node:path';
import { hearthHome } from '../config/load.js';
import { trustProject } from '../config/trust.js';
import { BackgroundReflection } from '../setup/background-reflection.js';
import type { RunRow, WakeupRow } from '../store/rows.js';
import { homeScope, type SchedulerStorage, type WakeupStorage } from '../store/scheduler-storage.js';
import type { SessionStorage } from '../store/session-storage.js';
import { type Db, openDatabase } from '../store/sqlite/database.js';
import { SqliteSchedulerStorage } from '../store/sqlite/scheduler.js';
import { SqliteSessionStorage } from '../store/sqlite/sessions.js';
import { openStorage, type PostgresStorage, type Storage } from '../store/storage.js';
import { type Clock, systemClock } from '../util/clock.js';
import { parseWhen } from '../util/when.js';
import { agentRunner } from './agent-runner.js';
import { JobDefinitionError, SchedulerError } from './errors.js';
import { Inbox } from './inbox.js';
import {
  defineJob,
  type JobDefinition,
  type JobFiles,
  type JobInput,
  type LoadedJobs,
  loadJobFiles,
  runsOnQueue,
} from './job-definitions.js';
import { nextSlot, upcoming } from './schedule.js';
import { type Runner, Scheduler, type SchedulerEvent } from './scheduler.js';

export interface SchedulerServiceOptions {
  db: Db;
  /** Where that database is, for the runs' sessions. */
  dbPath: string;
  /** The user's Hearth home: cron.json, inbox/, approvals. */
  home: string;
  /** Its `.hearth/cron.json` is read, and jobs and inbox tasks that name no folder run there. */
  workspace: string;
  clock?: Clock;
  /** Default: agent sessions (agentRunner). */
  runner?: Runner;
  env?: NodeJS.ProcessEnv;
  onEvent?: (event: SchedulerEvent) => void;
  parallel?: number;
  poll?: number;
  /** The shared PostgreSQL database (config `storage`): jobs that run on the queue go there. */
  storage?: string;
  /** The process's Storage of that database, whose pool the queue runs on; default one of the queue's own. */
  shared?: PostgresStorage;
  /**
   * Where the scheduler's records and wake-ups are kept (`openSchedulerStorage`: PostgreSQL with
   * `storage`); default the SQLite tables in `db`.
   */
  records?: SchedulerStorage;
  /** Where sessions are found (`hearth wake`, a wake-up's workspace); default the SQLite ones in `db`. */
  sessions?: SessionStorage;
  /** Where a job's scheduled runs go when it does not say (config `scheduler.run_on`). */
  runOn?: 'here' | 'queue';
  /** Told what each reflection on a run's idle session did (src/setup/background-reflection.ts). */
  say?: (line: string) => void;
}

/** One job as `hearth jobs list` and `GET /api/cron` show it. */
export interface JobView {
  id: string;
  name: string;
  schedule: string;
  prompt: string;
  /** The session each run continues, when the job names one. */
  sessionId?: string;
  timezone?: string;
  enabled: boolean;
  catchUp: JobDefinition['catchUp'];
  overlap: JobDefinition['overlap'];
  /** Where its scheduled runs go: here, or the shared queue (with the tags a worker needs). */
  runsOn: 'here' | 'queue';
  tags: string[];
  workspace: string;
  /** A cron.json path, or `cli`. */
  source: string;
  nextAt?: number;
  lastRun?: RunRow;
  /** Slots missed (no scheduler running) and not made up, since the job last ran. */
  missed: number;
  /** Runs that went, scheduled and manual. */
  runCount: number;
}

/**
 * The scheduler as the CLI, the library and the gateway use it: jobs, runs, the inbox and
 * wake-ups over one database. `hearth scheduler` calls `start`; the gateway maps its routes here
 * (`GET /api/cron` → listJobs, `POST /api/cron/{id}/run` → runNow, `.../toggle` → toggle,
 * `POST /api/cron/reload` → reload).
 */
export class SchedulerService {
  readonly store: SchedulerStorage;
  readonly wakeups: WakeupStorage;
  readonly inbox: Inbox;
  readonly scheduler: Scheduler;
  private readonly clock: Clock;

  /** Where sessions are found: the configured storage, or the SQLite ones in `db`. */
  private readonly sessions: SessionStorage;
  private ownsDb = false;
  private ownStorage: Storage | undefined;
  /** Runs' sessions reflected on once idle; the idle time is each run's workspace config's. */
  private readonly reflection: BackgroundReflection;

  /**
   * Opens the database itself (the library's way in); `close` closes it. Defaults: the home is
   * $HEARTH_HOME or ~/.hearth, the database `hearth.db` in it (shared with the CLI).
   */
  static open(
    options: Omit<SchedulerServiceOptions, 'db' | 'dbPath' | 'home'> & { dbPath?: string; home?: string },
  ): SchedulerService {
    const home = options.home ?? hearthHome(options.env);
    const dbPath = options.dbPath ?? join(home, 'hearth.db');
    const service = new SchedulerService({ ...options, home, dbPath, db: openDatabase(dbPath) });
    service.ownsDb = true;
    return service;
  }

  /**
   * As `open`, with the sessions and the scheduler's records in the configured backend: with
   * `storage` (postgres://...) they are the database every machine shares, as for `hearth scheduler`.
   */
  static async connect(
    options: Omit<SchedulerServiceOptions, 'db' | 'dbPath' | 'home' | 'sessions' | 'records'> & {
      dbPath?: string;
      home?: string;
    },
  ): Promise<SchedulerService> {
    const home = options.home ?? hearthHome(options.env);
    const dbPath = options.dbPath ?? join(home, 'hearth.db');
    const db = openDatabase(dbPath);
    const storage = await openStorage({ storage: options.storage, db_path: dbPath }, { db }).catch(
      (err: unknown) => {
        db.close();
        throw err;
      },
    );
    const records = await storage.scheduler({ scope: homeScope(home) });
    const service = new SchedulerService({
      ...options,
      ...(storage.kind === 'postgres' ? { shared: storage } : {}),
      home,
      dbPath,
      db,
      sessions: storage.sessions,
      records,
    });
    service.ownsDb = true;
    service.ownStorage = storage;
    return service;
  }

  constructor(private readonly options: SchedulerServiceOptions) {
    this.clock = options.clock ?? systemClock;
    this.reflection = new BackgroundReflection({
      idleMs: 10 * 60_000,
      say: options.say ?? (() => undefined),
      clock: this.clock,
    });
    this.sessions = options.sessions ?? new SqliteSessionStorage(options.db, options.dbPath);
    this.store = options.records ?? new SqliteSchedulerStorage(options.db);
    this.wakeups = this.store.wakeups;
    this.inbox = new Inbox(join(options.home, 'inbox'));
    this.scheduler = new Scheduler({
      store: this.store,
      sessions: this.sessions,
      loadJobs: () => this.loadJobs(),
      runner:
        options.runner ??
        agentRunner({
          dbPath: options.dbPath,
          env: options.env,
          userDir: options.home,
          reflection: this.reflection,
        }),
      inbox: this.inbox,
      workspace: options.workspace,
      clock: this.clock,
      onEvent: options.onEvent,
      parallel: options.parallel,
      poll: options.poll,
      runOn: options.runOn,
      ...(options.storage ? { openQueue: openSharedQueue(options.storage, options.shared) } : {}),
    });
  }

  /** A shared database is configured: `hearth submit` then queues for its workers, not the inbox. */
  get sharesQueue(): boolean {
    return this.options.storage !== undefined;
  }

  get files(): JobFiles {
    const { home, workspace } = this.options;
    return {
      user: join(home, 'cron.json'),
      workspace: join(workspace, '.hearth', 'cron.json'),
      workspaceDir: workspace,
      userDir: home,
    };
  }

  /** Jobs from both cron.json files, then those added with `hearth jobs add`. */
  async loadJobs(): Promise<LoadedJobs> {
    const loaded = await loadJobFiles(this.files);
    for (const { id, definition } of await this.store.storedDefinitions()) {
      try {
        const job = defineJob(JSON.parse(definition), 'cli', this.options.workspace);
        if (loaded.jobs.some((j) => j.id === job.id)) {
          loaded.problems.push(
            `job "${id}" (hearth jobs add) is shadowed by one with the same id in a cron.json`,
          );
        } else loaded.jobs.push(job);
      } catch (err) {
        loaded.problems.push(`job "${id}" (hearth jobs add): ${(err as Error).message}`);
      }
    }
    return loaded;
  }

  async listJobs(): Promise<{ jobs: JobView[]; problems: string[] }> {
    const { jobs, problems } = await this.loadJobs();
    const now = this.clock.now();
    return { jobs: await Promise.all(jobs.map((job) => this.view(job, now))), problems };
  }

  private async view(job: JobDefinition, now: number): Promise<JobView> {
    const state = await this.store.jobState(job.id);
    const enabled = state?.enabledOverride ?? job.enabled;
    const recent = await this.store.runs({ jobId: job.id, limit: 200 });
    const lastRan = recent.findIndex((r) => r.status !== 'skipped');
    const sinceRan = lastRan === -1 ? recent : recent.slice(0, lastRan);
    return {
      id: job.id,
      name: job.name,
      schedule: job.schedule.text,
      prompt: job.prompt,
      sessionId: job.sessionId,
      timezone: job.timezone,
      enabled,
      catchUp: job.catchUp,
      overlap: job.overlap,
      runsOn: this.runsOnQueue(job) ? 'queue' : 'here',
      tags: job.tags,
      workspace: job.workspace,
      source: job.source,
      nextAt: enabled
        ? nextSlot(job.schedule, Math.max(state?.cursorAt ?? now, now), state?.anchorAt ?? now)
        : undefined,
      lastRun: recent[0],
      missed: sinceRan.filter((r) => r.reason?.startsWith('missed')).length,
      runCount: await this.store.runCount(job.id),
    };
  }

  async job(id: string): Promise<JobDefinition> {
    const { jobs } = await this.loadJobs();
    const job = jobs.find((j) => j.id === id);
    if (!job) {
      const known = jobs.map((j) => j.id).join(', ');
      throw new SchedulerError(
        `No job "${id}".${known ? ` Jobs: ${known}.` : ' Add one with: hearth jobs add NAME --schedule ... --prompt ...'}`,
      );
    }
    return job;
  }

  /** The next `count` times a job runs (`hearth jobs next`). */
  async next(id: string, count: number): Promise<number[]> {
    const job = await this.job(id);
    const now = this.clock.now();
    const state = await this.store.jobState(job.id);
    return upcoming(job.schedule, Math.max(state?.cursorAt ?? now, now), state?.anchorAt ?? now, count);
  }

  runs(filter: { jobId?: string; limit?: number } = {}): Promise<RunRow[]> {
    return this.store.runs(filter);
  }

  /** Adds a job kept in the store (`hearth jobs add`); its workspace defaults to the current one. */
  async addJob(input: JobInput): Promise<JobDefinition> {
    let job: JobDefinition;
    try {
      job = defineJob(input, 'cli', this.options.workspace);
    } catch (err) {
      if (err instanceof JobDefinitionError)
        throw new SchedulerError(`The job cannot be added: ${err.message}`);
      throw err;
    }
    const { jobs } = await this.loadJobs();
    const clash = jobs.find((j) => j.id === job.id);
    if (clash) throw new SchedulerError(`A job "${job.id}" exists (${clash.source}); choose another --id.`);
    await this.store.saveDefinition(
      job.id,
      JSON.stringify({ ...job.input, workspace: job.workspace }),
      this.clock.now(),
    );
    return job;
  }

  async setEnabled(id: string, enabled: boolean): Promise<void> {
    const job = await this.job(id);
    await this.store.setEnabledOverride(job.id, enabled, this.clock.now());
  }

  /** Flips a job on or off; resolves to whether it is on now (`POST /api/cron/{id}/toggle`). */
  async toggle(id: string): Promise<boolean> {
    const job = await this.job(id);
    const enabled = !((await this.store.jobState(job.id))?.enabledOverride ?? job.enabled);
    await this.store.setEnabledOverride(job.id, enabled, this.clock.now());
    return enabled;
  }

  /** Removes a job added with `hearth jobs add`; one from a cron.json is removed there. */
  async removeJob(id: string): Promise<void> {
    const job = await this.job(id);
    if (job.source !== 'cli')
      throw new SchedulerError(
        `Job "${id}" is defined in ${job.source}; remove it there (or: hearth jobs disable ${id}).`,
      );
    await this.store.removeJob(job.id);
  }

  /**
   * Runs a job now, here or, for a job that runs on the queue, on a worker; the record says how it
   * went (`POST /api/cron/{id}/run`, `hearth jobs run`). See `Scheduler.runNow`.
   */
  async runNow(id: string, options: { wait?: boolean; signal?: AbortSignal } = {}): Promise<RunRow> {
    const job = await this.job(id);
    return this.scheduler.runNow(job.id, options);
  }

  /** Whether a job's runs go to the shared queue (the config's `scheduler.run_on` decides when it does not say). */
  runsOnQueue(job: JobDefinition): boolean {
    return runsOnQueue(job, this.options.runOn ?? 'here');
  }

  /**
   * Records the results workers gave for runs handed to the queue since a scheduler last looked
   * (`hearth jobs runs`, when no scheduler runs here). Returns the runs it finished.
   */
  collectResults(): Promise<RunRow[]> {
    return this.scheduler.collectResults();
  }

  reload(): Promise<LoadedJobs> {
    return this.scheduler.reload();
  }

  /** Approves the workspace's cron.json as it is now (`hearth jobs trust`). */
  async trustWorkspaceJobs(): Promise<void> {
    await trustProject(this.options.home, this.files.workspace);
  }

  submit(task: string, workspace?: string): Promise<string> {
    return this.inbox.submit(task, workspace, this.clock.now());
  }

  /** Sets a stored session to resume at `at` ("in 1h", "09:00", an ISO time) with a message. */
  async wake(sessionIdOrPrefix: string, at: string, message: string): Promise<WakeupRow> {
    const session = await this.sessions.resolve(sessionIdOrPrefix);
    const when = parseWhen(at, this.clock.now());
    if (typeof when !== 'number') throw new SchedulerError(when.error);
    return this.wakeups.add(session.id, when, message, this.clock.now());
  }

  start(): void {
    this.scheduler.start();
  }

  stop(): Promise<void> {
    return this.scheduler.stop();
  }

  /** Stops the scheduler; closes the database when `open` opened it. */
  async close(): Promise<void> {
    await this.stop();
    await this.reflection.close();
    await this.ownStorage?.close();
    if (this.ownsDb) this.options.db.close();
  }
}

/**
 * The queue, loaded on first use: graphile-worker and pg stay out of schedulers that never use it.
 * It runs on the process's pool when there is one (`shared`), else on a Storage of its own.
 */
function openSharedQueue(url: string, shared: PostgresStorage | undefined) {
  return async () => {
    if (shared) return shared.queue();
    const own = (await openStorage({ storage: url })) as PostgresStorage;
    const queue = await own.queue().catch(async (err: unknown) => {
      await own.close();
      throw err;
    });
    const release = queue.close.bind(queue);
    queue.close = async () => {
      await release();
      await own.close();
    };
    return queue;
  };
}
