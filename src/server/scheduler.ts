import type { WireEvent } from '../cluster/wire.js';
import type { Runner, SchedulerEvent } from '../scheduler/scheduler.js';
import { SchedulerService } from '../scheduler/service.js';
import type { RunRow } from '../store/rows.js';
import type { SchedulerStorage } from '../store/scheduler-storage.js';
import type { SessionStorage } from '../store/session-storage.js';
import type { Db } from '../store/sqlite/database.js';
import type { PostgresStorage } from '../store/storage.js';
import { type Clock, systemClock } from '../util/clock.js';

/** How the gateway runs the scheduler (`createServer({scheduler})`); tests inject the clock. */
export interface GatewaySchedulerSettings {
  clock?: Clock;
  /** Default: agent sessions, as `hearth scheduler` runs them. */
  runner?: Runner;
  /** Runs going at once (default 1). */
  parallel?: number;
  /** The longest sleep between ticks (default 15 s). */
  poll?: number;
  env?: NodeJS.ProcessEnv;
  /** The shared database and the default of `scheduler.run_on` (from the config). */
  storage?: string;
  /** The gateway's Storage of that database: the queue runs on its pool. */
  shared?: PostgresStorage;
  /** The scheduler's records (`storage.scheduler()`, PostgreSQL with `storage`); default the SQLite tables in `db`. */
  records?: SchedulerStorage;
  runOn?: 'here' | 'queue';
}

export interface GatewaySchedulerOptions extends GatewaySchedulerSettings {
  db: Db;
  dbPath: string;
  /** The gateway's sessions: wake-ups find theirs there. */
  sessions?: SessionStorage;
  home: string;
  workspace: string;
  /** Where job transitions go: the activity feed (`/ws/activity`, `GET /api/events`). */
  announce: (event: WireEvent, sessionId: string | null) => void;
  log: (line: string) => void;
}

/**
 * The scheduler inside the gateway: the same `SchedulerService` as `hearth scheduler`, on the
 * gateway's database and home. The routes always reach it (list, toggle, run now, reload, the
 * inbox); it ticks only when started, and then only while it holds the lease, so a `hearth
 * scheduler` running beside the gateway never fires a slot twice: one of them stands by.
 */
export class GatewayScheduler {
  readonly service: SchedulerService;
  private running = false;
  private readonly clock: Clock;
  private readonly log: (line: string) => void;
  private readonly manual = new Set<Promise<unknown>>();

  constructor(options: GatewaySchedulerOptions) {
    const { announce } = options;
    this.clock = options.clock ?? systemClock;
    this.log = options.log;
    this.service = new SchedulerService({
      db: options.db,
      dbPath: options.dbPath,
      home: options.home,
      workspace: options.workspace,
      clock: this.clock,
      runner: options.runner,
      parallel: options.parallel,
      poll: options.poll,
      env: options.env,
      storage: options.storage,
      ...(options.shared ? { shared: options.shared } : {}),
      ...(options.records ? { records: options.records } : {}),
      sessions: options.sessions,
      runOn: options.runOn,
      say: (line) => this.log(line),
      onEvent: (event) => {
        // A cron.json that did not load is for the person who started the gateway too.
        if (event.type === 'problem') this.log(`scheduler: ${event.message}`);
        announce(schedulerEvent(event), sessionOf(event));
      },
    });
  }

  /** Jobs, the inbox and wake-ups run in this process from now on, while it holds the lease. */
  start(): void {
    this.running = true;
    this.service.start();
  }

  /** Whether this gateway runs the scheduler (it may be standing by for another process). */
  get started(): boolean {
    return this.running;
  }

  /** Whether this process schedules now (holds the lease), as of its last tick. */
  get leader(): boolean {
    return this.service.scheduler.isLeader;
  }

  /** The process that schedules now (this one or a `hearth scheduler`), if any. */
  async holderPid(): Promise<number | undefined> {
    return (await this.service.store.leaseHolder(this.clock.now()))?.pid;
  }

  /** A manual run the caller does not wait for; shutdown stops it with the rest. */
  background(run: Promise<RunRow>): void {
    const tracked = run.catch((err: unknown) =>
      this.log(`A manual job run failed: ${(err as Error).message}`),
    );
    this.manual.add(tracked);
    void tracked.finally(() => this.manual.delete(tracked));
  }

  /** Stops ticking and the runs going (recorded as failed: stopped), and gives the lease up. */
  async stop(): Promise<void> {
    await this.service.stop();
    await Promise.all(this.manual);
  }
}

/** A run as the API shows it. */
export function runJson(run: RunRow) {
  return {
    id: run.id,
    kind: run.kind,
    job_id: run.jobId,
    slot_at: run.slotAt,
    ref: run.ref,
    status: run.status,
    reason: run.reason,
    caught_up: run.caughtUp,
    workspace: run.workspace,
    session_id: run.sessionId,
    queue_key: run.queueKey,
    worker: run.worker,
    host: run.host,
    prompt_tokens: run.promptTokens,
    completion_tokens: run.completionTokens,
    created_at: run.createdAt,
    started_at: run.startedAt,
    ended_at: run.endedAt,
  };
}

/** One scheduler event on the activity feed: `{type: "scheduler", event, ...}`. */
function schedulerEvent(event: SchedulerEvent): WireEvent {
  switch (event.type) {
    case 'lease':
      return {
        type: 'scheduler',
        event: 'lease',
        state: event.state,
        ...(event.holderPid ? { holder_pid: event.holderPid } : {}),
      };
    case 'problem':
      return { type: 'scheduler', event: 'problem', message: event.message };
    default:
      return { type: 'scheduler', event: event.type, job_id: event.run.jobId, run: runJson(event.run) };
  }
}

function sessionOf(event: SchedulerEvent): string | null {
  return 'run' in event ? event.run.sessionId : null;
}
