import { randomBytes } from 'node:crypto';
import { type RunOutcome, type RunRow, SessionNotFoundError } from '../store/rows.js';
import type { SchedulerRecords, SchedulerStorage } from '../store/scheduler-storage.js';
import type { SessionStorage } from '../store/session-storage.js';
import { type Clock, sleep, systemClock, type TimerHandle } from '../util/clock.js';
import type { Inbox } from './inbox.js';
import { type JobDefinition, type LoadedJobs, runsOnQueue } from './job-definitions.js';
import { planSlots } from './plan-slots.js';
import { QueueHandoff, type RunQueue } from './queue-handoff.js';
import { nextSlot, slotsBetween } from './schedule.js';

/**
 * The scheduler loop, with its exactly-once rules (ours: no job-queue library keeps a per-slot
 * record in the same database as the sessions, and that record is the product).
 *
 * - One process at a time schedules: the one holding the lease in the store, renewed every tick.
 *   Others stand by and take over once it stops renewing. (In PostgreSQL one per Hearth home; the
 *   claiming transactions of all of them take turns: scheduler-storage.ts.)
 * - A job's slots are decided in one transaction that checks the lease, records a row per slot
 *   (a unique index allows one per job and slot) and moves the job's cursor past them; so a slot
 *   is recorded once, whoever decides, whenever a process dies.
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
}

interface Active {
  controller: AbortController;
  done: Promise<void>;
}

/** The most slots one tick records for a job; a longer backlog is worked off over the next ticks. */
const SLOTS_PER_TICK = 50_000;

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

  constructor(private readonly options: SchedulerOptions) {
    this.clock = options.clock ?? systemClock;
    this.ttl = options.leaseTtl ?? 60_000;
    this.poll = options.poll ?? 15_000;
    this.lateAfter = options.lateAfter ?? 120_000;
    this.parallel = options.parallel ?? 1;
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
    const pid = this.options.pid ?? process.pid;
    const lease = await store.acquireLease(this.owner, pid, this.clock.now(), this.ttl);
    if (lease === 'held') {
      if (this.leader !== false) {
        const holder = await store.leaseHolder(this.clock.now());
        this.emit({ type: 'lease', state: 'standby', holderPid: holder?.pid });
      }
      this.leader = false;
      return;
    }
    if (lease === 'acquired') this.emit({ type: 'lease', state: 'acquired' });
    this.leader = true;
    await this.reload();
    const recorded = await this.claimDue(lease === 'acquired', await this.wakeupWorkspaces());
    if (recorded === undefined) return;
    for (const run of recorded) this.emit({ type: 'recorded', run });
    if (this.options.inbox) await this.takeInbox(this.options.inbox);
    await store.renewRunLeases(this.owner, this.clock.now(), this.ttl);
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

  /**
   * The workspace of each due wake-up's session, looked up before the claiming transaction (which
   * cannot wait on another database); a wake-up whose session is not found waits, as it always did.
   */
  private async wakeupWorkspaces(): Promise<Map<string, string>> {
    const { store, sessions } = this.options;
    const found = new Map<string, string>();
    for (const wakeup of await store.wakeups.due(this.clock.now())) {
      if (found.has(wakeup.sessionId)) continue;
      const row = await sessions.get(wakeup.sessionId).catch((err: unknown) => {
        if (err instanceof SessionNotFoundError) return undefined;
        throw err;
      });
      if (row) found.set(wakeup.sessionId, row.workspace);
    }
    return found;
  }

  /** Records every due slot and wake-up in one transaction; undefined when the lease was lost meanwhile. */
  private claimDue(fresh: boolean, workspaces: ReadonlyMap<string, string>): Promise<RunRow[] | undefined> {
    const ttl = this.ttl;
    return this.options.store.exclusive(async (tx) => {
      const now = this.clock.now();
      if (!(await tx.holdsLease(this.owner, now))) return undefined;
      const ids: number[] = [];
      for (const run of await tx.recoverExpired(now, this.owner, ttl)) this.emit({ type: 'finished', run });
      for (const job of this.jobs) {
        const state = await tx.ensureJob(job.id, now);
        if (!(state.enabledOverride ?? job.enabled)) {
          // Slots while a job is off are not owed: when it comes back on, it starts from then.
          await tx.moveCursor(job.id, now);
          continue;
        }
        if (job.schedule.kind === 'startup') {
          if (fresh) ids.push(await tx.insertRun(this.jobRun(job, now, 'queued'), now, this.owner, ttl));
          continue;
        }
        const slots = slotsBetween(job.schedule, state.cursorAt, now, state.anchorAt, SLOTS_PER_TICK);
        if (slots.length === 0) continue;
        const open = await tx.openRuns(job.id);
        for (const decision of planSlots({
          slots,
          now,
          lateAfter: this.lateAfter,
          catchUp: job.catchUp,
          overlap: job.overlap,
          open: open.length,
          waiting: open.filter((r) => r.status === 'queued').length,
        })) {
          const run = { ...this.jobRun(job, decision.slotAt, decision.status), ...decision };
          ids.push(await tx.insertRun(run, now, this.owner, decision.status === 'queued' ? ttl : undefined));
        }
        await tx.moveCursor(job.id, slots.at(-1)!);
      }
      for (const wakeup of await tx.wakeups.due(now)) {
        const workspace = workspaces.get(wakeup.sessionId);
        if (workspace === undefined || !(await tx.wakeups.markFired(wakeup.id))) continue;
        const late = now - wakeup.at > this.lateAfter;
        const note = late
          ? `set for ${iso(wakeup.at)}, delivered at ${iso(now)}: no scheduler was running`
          : `set for ${iso(wakeup.at)}`;
        const prompt = `[Wake-up, ${note}] ${wakeup.message}`;
        const run = {
          kind: 'wakeup' as const,
          status: 'queued' as const,
          ref: wakeup.id,
          prompt,
          sessionId: wakeup.sessionId,
          workspace,
          caughtUp: late,
        };
        ids.push(await tx.insertRun(run, now, this.owner, ttl));
      }
      return rows(tx, ids);
    });
  }

  private jobRun(job: JobDefinition, slotAt: number, status: 'queued' | 'skipped') {
    return {
      kind: 'scheduled' as const,
      status,
      jobId: job.id,
      slotAt,
      prompt: job.prompt,
      workspace: job.workspace,
    };
  }

  /** Takes waiting inbox files, and settles or adopts files a stopped scheduler left in `running/`. */
  private async takeInbox(inbox: Inbox): Promise<void> {
    const { store } = this.options;
    for (const name of await inbox.running()) {
      const run = await store.byRef('inbox', name);
      if (!run) await this.queueInbox(inbox, name);
      else if (run.status === 'ok' || run.status === 'failed') await this.settleInbox(inbox, run);
    }
    for (const name of await inbox.waiting()) {
      if (await inbox.claim(name)) await this.queueInbox(inbox, name);
    }
  }

  private async queueInbox(inbox: Inbox, name: string): Promise<void> {
    const { store } = this.options;
    const task = await inbox.read(name, this.options.workspace);
    const now = this.clock.now();
    if ('error' in task) {
      const id = await store.insertRun(
        { kind: 'inbox', status: 'queued', ref: name },
        now,
        this.owner,
        this.ttl,
      );
      await store.startRun(id, this.owner, now, this.ttl);
      await store.finishRun(id, this.owner, { status: 'failed', reason: task.error }, now);
      const failed = (await store.get(id))!;
      await this.settleInbox(inbox, failed);
      this.emit({ type: 'finished', run: failed });
      return;
    }
    const run = {
      kind: 'inbox' as const,
      status: 'queued' as const,
      ref: name,
      prompt: task.task,
      workspace: task.workspace,
    };
    const id = await store.insertRun(run, now, this.owner, this.ttl);
    this.emit({ type: 'recorded', run: (await store.get(id))! });
  }

  private async settleInbox(inbox: Inbox, run: RunRow): Promise<void> {
    await inbox.settle(run.ref!, {
      status: run.status === 'ok' ? 'ok' : 'failed',
      session: run.sessionId ?? undefined,
      reason: run.reason ?? undefined,
      run: run.id,
      finished_at: iso(run.endedAt ?? this.clock.now()),
    });
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
    for (const run of await store.queued(this.owner)) {
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
    const { store, runner } = this.options;
    const controller = new AbortController();
    const job = run.jobId ? this.jobs.find((j) => j.id === run.jobId) : undefined;
    // The run's lease is renewed while it goes, so a long run is not taken for a dead one.
    let heartbeat: TimerHandle | undefined;
    const renew = () => {
      store.renewRunLeases(this.owner, this.clock.now(), this.ttl).catch((err: unknown) => {
        // The database is away: the lease lapses unless a later renewal gets through.
        this.emit({ type: 'problem', message: `renewing run leases failed: ${(err as Error).message}` });
      });
      heartbeat = this.clock.setTimeout(renew, this.ttl / 3);
    };
    heartbeat = this.clock.setTimeout(renew, this.ttl / 3);
    this.emit({ type: 'started', run });
    const done = (async () => {
      let outcome: RunOutcome;
      try {
        outcome = await runner(
          {
            run,
            job,
            previousSession,
            onSession: (id) => {
              store.noteSession(run.id, id).catch((err: unknown) => {
                this.emit({ type: 'problem', message: `run ${run.id}: ${(err as Error).message}` });
              });
            },
          },
          controller.signal,
        );
      } catch (err) {
        outcome = { status: 'failed', reason: (err as Error).message };
      }
      if (controller.signal.aborted && outcome.status === 'ok') outcome = { ...outcome, status: 'failed' };
      if (controller.signal.aborted) outcome.reason ??= 'stopped: the scheduler was shut down';
      this.clock.clearTimeout(heartbeat);
      await store.finishRun(run.id, this.owner, outcome, this.clock.now());
      const finished = (await store.get(run.id))!;
      if (finished.kind === 'inbox' && this.options.inbox)
        await this.settleInbox(this.options.inbox, finished);
      this.emit({ type: 'finished', run: finished });
    })().finally(() => {
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
    const { store } = this.options;
    const times = await Promise.all(
      this.jobs.map(async (job) => {
        const state = await store.jobState(job.id);
        return state ? nextSlot(job.schedule, state.cursorAt, state.anchorAt) : undefined;
      }),
    );
    times.push(await store.wakeups.nextAt());
    const due = times.filter((t): t is number => t !== undefined);
    return due.length ? Math.min(...due) : undefined;
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
    await this.options.store.releaseLease(this.owner);
    this.leader = false;
  }

  private emit(event: SchedulerEvent): void {
    this.options.onEvent?.(event);
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/:\d{2}\.\d{3}Z$/, 'Z');
}

/** The runs of these ids, as recorded. */
async function rows(records: SchedulerRecords, ids: readonly number[]): Promise<RunRow[]> {
  const found: RunRow[] = [];
  for (const id of ids) found.push((await records.get(id))!);
  return found;
}
