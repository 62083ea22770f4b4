/**
 * The scheduler's own records behind one asynchronous interface: the lease, each job's progress
 * (cursor, stored definition, on/off override), one row per run or slot, and wake-ups. Two
 * backends: the SQLite file (`sqlite-scheduler.ts`, `sqlite-wakeups.ts`; one machine) and the
 * PostgreSQL database several machines share (`postgres/scheduler.ts`, `postgres/wakeups.ts`),
 * handed out by the one Storage (`storage.scheduler()`, src/store/storage.ts).
 *
 * Times are epoch milliseconds of the caller's clock, except lease expiries: a backend may keep
 * them on a clock of its own (PostgreSQL: the server's, so machines whose clocks drift still agree
 * on whose lease lapsed), which is why leases are given as lengths (`ttl`), not as ends.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { JobStateRow, NewRun, RunKind, RunOutcome, RunRow, WakeupRow } from './rows.js';

export type LeaseResult = 'acquired' | 'renewed' | 'held';

export interface SchedulerRecords {
  /**
   * Takes or renews the scheduler lease. `acquired` when this owner did not hold it before (a
   * fresh start, or a takeover from a holder that stopped renewing); `held` when another has it.
   */
  acquireLease(owner: string, pid: number, now: number, ttl: number): Promise<LeaseResult>;
  /** True while `owner` holds an unexpired lease (checked inside each claiming transaction). */
  holdsLease(owner: string, now: number): Promise<boolean>;
  /** Who holds the lease now, if anybody does. */
  leaseHolder(now: number): Promise<{ owner: string; pid: number } | undefined>;
  releaseLease(owner: string): Promise<void>;

  jobState(id: string): Promise<JobStateRow | undefined>;
  /** The job's state, created on first sight: its interval anchor and cursor start now, nothing is owed before. */
  ensureJob(id: string, now: number): Promise<JobStateRow>;
  /** Jobs added with `hearth jobs add`: their entries as stored. */
  storedDefinitions(): Promise<Array<{ id: string; definition: string }>>;
  saveDefinition(id: string, definition: string, now: number): Promise<void>;
  /** Forgets a job and its progress; its runs stay as history. */
  removeJob(id: string): Promise<void>;
  setEnabledOverride(id: string, enabled: boolean, now: number): Promise<void>;
  moveCursor(id: string, cursorAt: number): Promise<void>;

  /** Records a run; `owner` and `ttl` lease it to a scheduler process (queued runs). */
  insertRun(run: NewRun, now: number, owner?: string, ttl?: number): Promise<number>;
  /** Queued → running, only for its owner: false when the lease was lost and another took the run over. */
  startRun(id: number, owner: string, now: number, ttl: number): Promise<boolean>;
  /** Queued → skipped, with the reason, only for its owner. */
  skipRun(id: number, owner: string, reason: string, now: number): Promise<boolean>;
  /**
   * Records how a run ended. The run did happen, so its outcome is written even if a takeover
   * marked it interrupted meanwhile (a paused process that came back).
   */
  finishRun(id: number, owner: string, outcome: RunOutcome, now: number): Promise<void>;
  /**
   * Marks a queued run as handed to the shared queue under `key`: running from now on, elsewhere,
   * with no lease of this process (a worker's lease covers it there). False when it was not queued.
   */
  handOffRun(id: number, owner: string, now: number, key: string): Promise<boolean>;
  /** Runs a queue worker has and whose result has not been recorded yet, whoever handed them off. */
  handedOff(): Promise<RunRow[]>;
  /** Records the result a queue worker gave; false when it was recorded already. */
  finishHandedOff(key: string, outcome: RunOutcome, now: number): Promise<boolean>;
  /** Where a running run's session is known before it ends (so a crash still points at it). */
  noteSession(id: number, sessionId: string): Promise<void>;
  /** Extends the leases of the owner's queued and running runs (not those handed to the queue). */
  renewRunLeases(owner: string, now: number, ttl: number): Promise<void>;
  /**
   * After a process died: its running runs are recorded as failed (they may have done part of
   * their work, so they are not run again: at most once); its queued runs never started, so
   * `owner` adopts them. Runs handed to the shared queue are a worker's: left alone.
   */
  recoverExpired(now: number, owner: string, ttl: number): Promise<RunRow[]>;
  /** Queued runs of this owner, oldest slot first. */
  queued(owner: string): Promise<RunRow[]>;
  /** The run of an inbox file or a wake-up. */
  byRef(kind: RunKind, ref: string): Promise<RunRow | undefined>;
  /** Queued and running runs of a job. */
  openRuns(jobId: string): Promise<RunRow[]>;
  get(id: number): Promise<RunRow | undefined>;
  /** The latest runs, newest first; of one job, or of every kind. */
  runs(filter?: { jobId?: string; kind?: RunKind; limit?: number }): Promise<RunRow[]>;
  /** Runs of a job that went (ended or going; skipped slots do not count): the seed's `run_count`. */
  runCount(jobId: string): Promise<number>;

  readonly wakeups: WakeupStorage;
}

export interface SchedulerStorage extends SchedulerRecords {
  /**
   * Runs `work` as one transaction that one scheduler at a time enters (SQLite: an IMMEDIATE
   * transaction; PostgreSQL: a transaction holding an advisory lock), over the records `work` is
   * given: what one scheduler decided, the next reads before deciding anything.
   */
  exclusive<T>(work: (tx: SchedulerRecords) => Promise<T>): Promise<T>;
}

/** A session may hold this many pending wake-ups: a model stuck in a loop cannot fill the table. */
export const MAX_PENDING_WAKEUPS = 10;

export class WakeupLimitError extends Error {
  override name = 'WakeupLimitError';
}

/** A new pending wake-up, with a short random id people can type. */
export function newWakeup(sessionId: string, at: number, message: string, now: number): WakeupRow {
  return { id: randomBytes(4).toString('hex'), sessionId, at, message, status: 'pending', createdAt: now };
}

export function wakeupLimitError(sessionId: string, pending: number): WakeupLimitError {
  return new WakeupLimitError(
    `Session ${sessionId} already has ${pending} pending wake-ups (the limit); cancel one first.`,
  );
}

/** Sessions set to resume at a time with a message; the scheduler fires them. */
export interface WakeupStorage {
  add(sessionId: string, at: number, message: string, now: number): Promise<WakeupRow>;
  /** Pending wake-ups due by `now`, oldest first. */
  due(now: number): Promise<WakeupRow[]>;
  /** The earliest pending time, to sleep until. */
  nextAt(): Promise<number | undefined>;
  /** Pending → fired; false when another scheduler fired it first. Call inside the claiming transaction. */
  markFired(id: string): Promise<boolean>;
  cancel(idOrPrefix: string): Promise<WakeupRow | undefined>;
  list(filter?: { sessionId?: string; pendingOnly?: boolean; limit?: number }): Promise<WakeupRow[]>;
}

export interface SchedulerStorageOptions {
  /**
   * Whose lease this is, in a database several machines share: one scheduler per Hearth home on a
   * machine (its cron.json and inbox are that home's), while all of them share the runs.
   */
  scope: string;
  /** PostgreSQL: compare leases on this clock instead of the server's (tests on simulated time). */
  leaseClock?: 'server' | 'caller';
}

/** The lease scope of a scheduler of this Hearth home on this machine (PostgreSQL). */
export function homeScope(home: string): string {
  return `${hostname()}:${home}`;
}
