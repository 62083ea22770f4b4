import { randomBytes } from 'node:crypto';
import type { Lease } from '../store/leases.js';
import type { RunOutcome, RunRow } from '../store/rows.js';
import type { SchedulerStorage } from '../store/scheduler-storage.js';
import type { SessionStorage } from '../store/session-storage.js';
import { type Clock, sleep, systemClock } from '../util/clock.js';
import { type DueScope, nextDue, recordDue, wakeupWorkspaces } from './due-runs.js';
import type { Inbox } from './inbox.js';
import { type InboxScope, takeInbox } from './inbox-runs.js';
import { type JobDefinition, type LoadedJobs, runsOnQueue } from './job-definitions.js';
import { QueueHandoff, type RunQueue } from './queue-handoff.js';
import { executeRun } from './run-execution.js';
import { type LeaseScope, schedulingLease } from './scheduler-lease.js';
import { type ElapsedSources, systemElapsed, TickGap } from './tick-gap.js';

/**
 * The scheduler loop, with its exactly-once rules (ours: no job-queue library keeps a per-slot
 * record in the same database as the sessions, and that record is the product).
 *
 * - One process at a time schedules: the one holding the lease in the store, taken or renewed
 *   every tick and renewed between ticks (scheduler-lease.ts). Others stand by and take over once
 *   it stops renewing. (In PostgreSQL one per Hearth home; the claiming transactions of all of
 *   them take turns: scheduler-storage.ts.)
 * - A job's slots are decided in one transaction that checks the lease, records a row per slot
 *   (a unique index allows one per job and slot) and moves the job's cursor past them; so a slot
 *   is recorded once, whoever decides, whenever a process dies (due-runs.ts). Inbox files become
 *   runs of their own (inbox-runs.ts).
 * - A run is at most once: one that was going when its process died is recorded as failed
 *   (interrupted), not run again; one that never started is adopted by the next scheduler.
 * - A manual run (`runNow`) is a row of its own and never touches the cursor.
 */
export interface RunRequest {
  run: RunRow;
  job?: JobDefinition;
  /** The session of the job's latest earlier run: a job whose session_id is a name continues it. */
  previousSession?: string;
  /** Called once the run's session exists, so the record points at it even if the process dies. */
  onSession(id: string): void;
}

/** Runs one agent task; resolves with how it ended (a throw counts as failed). */
export type Runner = (request: RunRequest, signal: AbortSignal) => Promise<RunOutcome>;

export type SchedulerEvent =
  | { type: 'lease'; state: 'acquired' | 'standby'; holderPid?: number }
  | { type: 'recorded'; run: RunRow }
  | { type: 'started'; run: RunRow }
  | { type: 'finished'; run: RunRow }
  | { type: 'problem'; message: string };

export interface SchedulerOptions {
  /** The scheduler's records and wake-ups (scheduler-storage.ts). */
  store: SchedulerStorage;
  /** Where a wake-up's session is found (the workspace it runs in). */
  sessions: Pick<SessionStorage, 'get'>;
  /** The job definitions, read again at every tick (files and stored ones). */
  loadJobs: () => Promise<LoadedJobs>;
  runner: Runner;
  inbox?: Inbox;
  /** Where inbox tasks that name no workspace run. */
  workspace: string;
  clock?: Clock;
  pid?: number;
  /** How long the lease and a run's lease last without renewal (default 60 s). */
  leaseTtl?: number;
  /** The longest sleep between ticks (default 15 s): inbox scans and lease renewals. */
  poll?: number;
  /**
   * A slot first seen later than this after its time counts as missed (default 2 min: longer than a
   * takeover takes, so a scheduler restarted at once still runs it as on time).
   */
  lateAfter?: number;
  /** Runs going at once (default 1: a local model serves one request well at a time). */
  parallel?: number;
  /** The shared queue scheduled runs may go to (queue-handoff.ts); undefined: no shared database. */
  openQueue?: () => Promise<RunQueue>;
  /** Where a job's scheduled runs go when it does not say (config `scheduler.run_on`; default here). */
  runOn?: 'here' | 'queue';
  onEvent?: (event: SchedulerEvent) => void;
  /** The clocks that tell a sleep or a clock jump from a stopped scheduler (tests pass their own). */
  elapsed?: ElapsedSources;
}

interface Active {
  controller: AbortController;
  done: Promise<void>;
}

export class Scheduler {
  readonly owner = `${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly clock: Clock;
  private readonly ttl: number;
  private readonly poll: number;
  private readonly lateAfter: number;
  private readonly parallel: number;
  private readonly active = new Map<number, Active>();
  private jobs: JobDefinition[] = [];
  private problems = '';
  /** Undefined until the first tick. */
  private leader: boolean | undefined;
  private ticking: Promise<void> | undefined;
  private loopDone: Promise<void> | undefined;
  private stopping = false;
  /** Ends what waits on the queue for a manual run's result when the scheduler stops. */
  private readonly stopped = new AbortController();
  private wake = new AbortController();
  /** Set when a queued run's result may have come during a pass: the loop passes again at once. */
  private nudged = false;
  private readonly handoff: QueueHandoff;
  private dispatching: Promise<void> = Promise.resolve();
  private readonly leases: LeaseScope;
  private readonly lease: Lease;
  private readonly gap: TickGap;

  constructor(private readonly options: SchedulerOptions) {
    this.clock = options.clock ?? systemClock;
    this.ttl = options.leaseTtl ?? 60_000;
    this.poll = options.poll ?? 15_000;
    this.lateAfter = options.lateAfter ?? 120_000;
    this.parallel = options.parallel ?? 1;
    this.gap = new TickGap(options.elapsed ?? systemElapsed, this.lateAfter);
    this.handoff = new QueueHandoff({
      store: options.store,
      openQueue: options.openQueue,
      clock: this.clock,
      nudge: () => {
        this.nudged = true;
        this.wake.abort();
      },
      problem: (message) => this.emit({ type: 'problem', message }),
    });
    this.leases = { store: options.store, owner: this.owner, clock: this.clock, ttl: this.ttl };
    this.lease = schedulingLease(this.leases, options.pid ?? process.pid);
  }

  /** Whether this process holds the lease (as of its last tick). */
  get isLeader(): boolean {
    return this.leader === true;
  }

  /** One pass: take or renew the lease, record due slots, wake-ups and inbox tasks, start queued runs. */
  tick(): Promise<void> {
    this.ticking ??= this.pass().finally(() => {
      this.ticking = undefined;
    });
    return this.ticking;
  }

  private async pass(): Promise<void> {
    const { store } = this.options;
    const lease = await this.lease.acquire();
    if (lease === 'held') {
      this.gap.forget();
      if (this.leader !== false) {
        const holder = await store.leaseHolder(this.clock.now());
        this.emit({ type: 'lease', state: 'standby', holderPid: holder?.pid });
      }
      this.leader = false;
      return;
    }
    if (lease === 'acquired') this.emit({ type: 'lease', state: 'acquired' });
    this.leader = true;
    // Before expired runs are recovered: after a suspend this tick may come before the renewal
    // timers, and this process's own runs, still going, must not be taken for a dead process's.
    await store.renewRunLeases(this.owner, this.clock.now(), this.ttl);
    await this.reload();
    const workspaces = await wakeupWorkspaces(store, this.options.sessions, this.clock.now());
    const missedBecause = this.gap.observe(this.clock.now());
    const recorded = await recordDue(this.dueScope(missedBecause), lease === 'acquired', workspaces);
    if (recorded === undefined) return;
    for (const run of recorded) this.emit({ type: 'recorded', run });
    if (this.options.inbox) await takeInbox(this.inboxScope(), this.options.inbox);
    await this.dispatch();
    const settled = await this.handoff.settle(this.jobs, (jobId) => this.previousSession(jobId));
    for (const run of settled) this.emit({ type: 'finished', run });
    if (settled.length > 0) await this.dispatch();
  }

  /**
   * Records the results that came for runs handed to the queue, leader or not (a command that
   * shows runs while no scheduler runs); `addOnce` makes queueing any not yet queued harmless.
   */
  async collectResults(): Promise<RunRow[]> {
    await this.reload();
    return this.handoff.settle(this.jobs, (jobId) => this.previousSession(jobId));
  }

  /** Reads the job definitions again (`POST /api/cron/reload` and every tick). */
  async reload(): Promise<LoadedJobs> {
    const loaded = await this.options.loadJobs();
    this.jobs = loaded.jobs;
    const problems = loaded.problems.join('\n');
    if (problems !== this.problems)
      for (const message of loaded.problems) this.emit({ type: 'problem', message });
    this.problems = problems;
    return loaded;
  }

  private dueScope(missedBecause: string): DueScope {
    return {
      ...this.leases,
      lateAfter: this.lateAfter,
      missedBecause,
      jobs: this.jobs,
      now: () => this.clock.now(),
      interrupted: (run) => this.emit({ type: 'finished', run }),
    };
  }

  private inboxScope(): InboxScope {
    return {
      ...this.leases,
      workspace: this.options.workspace,
      now: () => this.clock.now(),
      recorded: (run) => this.emit({ type: 'recorded', run }),
      finished: (run) => this.emit({ type: 'finished', run }),
    };
  }

  /**
   * Starts queued runs, oldest slot first, one per job at a time and `parallel` in all here; a
   * job's scheduled runs that go to the shared queue are handed to it instead (queue-handoff.ts).
   */
  private dispatch(): Promise<void> {
    // One pass at a time: a run that ends asks for another while one may be going.
    this.dispatching = this.dispatching
      .then(() => this.dispatchPass())
      .catch((err: unknown) => {
        this.emit({ type: 'problem', message: `starting runs failed: ${(err as Error).message}` });
      });
    return this.dispatching;
  }

  private async dispatchPass(): Promise<void> {
    const { store } = this.options;
    if (this.stopping || !(await store.holdsLease(this.owner, this.clock.now()))) return;
    // A job passed over in this pass stays passed over: its run that ends meanwhile must not let a
    // later slot of it start before the earlier one still queued (catch_up: all keeps slot order).
    const passed = new Set<string>();
    for (const run of await store.queued(this.owner)) {
      if (run.jobId && passed.has(run.jobId)) continue;
      if (run.jobId) passed.add(run.jobId);
      if (run.jobId && (await store.openRuns(run.jobId)).some((r) => r.status === 'running')) continue;
      if (this.onQueue(run)) {
        if (!(await this.handoff.handOff(run, this.owner))) continue;
        const handed = (await store.get(run.id))!;
        this.emit({ type: handed.status === 'running' ? 'started' : 'finished', run: handed });
        continue;
      }
      if (this.active.size >= this.parallel || this.stopping) continue;
      const now = this.clock.now();
      if (await store.startRun(run.id, this.owner, now, this.ttl)) await this.begin(run.id);
    }
  }

  /** A scheduled run of a job whose runs go to the shared queue. */
  private onQueue(run: RunRow): boolean {
    const job = run.jobId ? this.jobs.find((j) => j.id === run.jobId) : undefined;
    return run.kind === 'scheduled' && job !== undefined && runsOnQueue(job, this.options.runOn ?? 'here');
  }

  /** The session of the job's latest run that had one (a job whose session_id is a name continues it). */
  private async previousSession(jobId: string, except?: number): Promise<string | undefined> {
    const runs = await this.options.store.runs({ jobId, limit: 20 });
    return runs.find((r) => r.sessionId && r.id !== except)?.sessionId ?? undefined;
  }

  /**
   * Runs a job now as a manual run: recorded on its own, leaving the job's slots and cursor as
   * they are. A job that runs on the shared queue goes to a worker (queue-handoff.ts); unless
   * `wait` is false, this waits for its result (until `signal` or `stop`). Resolves with the record:
   * ended, or `running` on the queue when it did not wait.
   */
  async runNow(jobId: string, options: { wait?: boolean; signal?: AbortSignal } = {}): Promise<RunRow> {
    const { store } = this.options;
    await this.reload();
    const job = this.jobs.find((j) => j.id === jobId);
    if (!job) throw new Error(`No job "${jobId}".`);
    const now = this.clock.now();
    await store.ensureJob(job.id, now);
    const id = await store.insertRun(
      { kind: 'manual', status: 'queued', jobId: job.id, prompt: job.prompt, workspace: job.workspace },
      now,
      this.owner,
      this.ttl,
    );
    if (runsOnQueue(job, this.options.runOn ?? 'here')) return this.runOnQueue(id, job, options);
    await store.startRun(id, this.owner, now, this.ttl);
    await (await this.begin(id)).done;
    return (await store.get(id))!;
  }

  private async runOnQueue(
    id: number,
    job: JobDefinition,
    options: { wait?: boolean; signal?: AbortSignal },
  ): Promise<RunRow> {
    const { store } = this.options;
    const current = async () => (await store.get(id))!;
    await this.handoff.handOff(await current(), this.owner);
    const run = await current();
    if (run.status !== 'running') {
      this.emit({ type: 'finished', run });
      return run;
    }
    try {
      await this.handoff.queueNow(run, job, await this.previousSession(job.id, id));
    } catch (err) {
      // Asked for now: it fails now, rather than waiting for a scheduler to queue it later.
      await store.finishHandedOff(
        run.queueKey!,
        { status: 'failed', reason: `the shared queue did not answer: ${(err as Error).message}` },
        this.clock.now(),
      );
      const failed = await current();
      this.emit({ type: 'finished', run: failed });
      return failed;
    }
    this.emit({ type: 'started', run: await current() });
    if (options.wait === false) return current();
    const signal = AbortSignal.any([this.stopped.signal, ...(options.signal ? [options.signal] : [])]);
    if (await this.handoff.waitFor(run.queueKey!, signal))
      this.emit({ type: 'finished', run: await current() });
    return current();
  }

  /**
   * Starts a run that was marked running: what it needs is read first, so the runner has it in
   * hand when this resolves (the tick that started it has started it).
   */
  private async begin(id: number): Promise<{ done: Promise<void> }> {
    const run = (await this.options.store.get(id))!;
    const previous = run.jobId ? await this.previousSession(run.jobId, run.id) : undefined;
    return { done: this.execute(run, previous) };
  }

  private execute(run: RunRow, previousSession: string | undefined): Promise<void> {
    const { store, runner, inbox } = this.options;
    const controller = new AbortController();
    const job = run.jobId ? this.jobs.find((j) => j.id === run.jobId) : undefined;
    const scope = { ...this.leases, store, runner, inbox, emit: (e: SchedulerEvent) => this.emit(e) };
    const done = executeRun(scope, run, job, previousSession, controller.signal).finally(() => {
      this.active.delete(run.id);
      return this.dispatch();
    });
    this.active.set(run.id, { controller, done });
    return done;
  }

  /** Resolves when no run of this process is going. */
  async idle(): Promise<void> {
    for (;;) {
      // A run that ended may be starting the next one: that one counts too.
      const pass = this.dispatching;
      await pass;
      if (pass !== this.dispatching) continue;
      if (this.active.size === 0) return;
      await Promise.all([...this.active.values()].map((a) => a.done));
    }
  }

  /** The next time something is due: a job's slot or a wake-up (for the loop's sleep and `jobs list`). */
  async nextDue(): Promise<number | undefined> {
    return nextDue(this.options.store, this.jobs);
  }

  /** Ticks until `stop`: at each due time, and every `poll` at least. */
  start(): void {
    this.loopDone ??= this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      this.nudged = false;
      try {
        await this.tick();
      } catch (err) {
        this.emit({ type: 'problem', message: `tick failed: ${(err as Error).message}` });
      }
      if (this.stopping) break;
      const now = this.clock.now();
      const due = this.leader
        ? ((await this.nextDue().catch(() => undefined)) ?? Number.POSITIVE_INFINITY)
        : Number.POSITIVE_INFINITY;
      this.wake = new AbortController();
      if (this.nudged) continue;
      await sleep(Math.max(0, Math.min(this.poll, due - now)), this.wake.signal, this.clock);
    }
  }

  /** Stops ticking, stops the runs going (recorded as failed: stopped) and gives up the lease. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopped.abort();
    this.wake.abort();
    await this.loopDone;
    await this.ticking;
    for (const active of this.active.values()) active.controller.abort();
    await this.idle();
    await this.dispatching;
    await this.handoff.close();
    await this.lease.release();
    this.leader = false;
  }

  private emit(event: SchedulerEvent): void {
    this.options.onEvent?.(event);
  }
}
