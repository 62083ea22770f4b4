/**
 * The scheduler's records in the SQLite file (see scheduler-storage.ts for the interface). Every
 * decision about a slot is one IMMEDIATE transaction (`exclusive`): SQLite lets one writer in at a
 * time across processes, so what one process decided the next one reads before deciding anything.
 * The statements are synchronous underneath; the interface is asynchronous for PostgreSQL's sake.
 */

import type { JobStateRow, NewRun, RunKind, RunOutcome, RunRow } from '../rows.js';
import type { LeaseResult, SchedulerRecords, SchedulerStorage } from '../scheduler-storage.js';
import type { Db } from './database.js';
import { WakeupStore } from './wakeups.js';

const RUN_COLUMNS = `id, kind, job_id AS jobId, slot_at AS slotAt, ref, status, reason, caught_up AS caughtUp,
  prompt, workspace, session_id AS sessionId, queue_key AS queueKey, worker, host, prompt_tokens AS promptTokens,
  completion_tokens AS completionTokens, owner, lease_until AS leaseUntil, created_at AS createdAt,
  started_at AS startedAt, ended_at AS endedAt`;

const LEASE = 'scheduler';

/**
 * The claiming transaction under way on each database file in this process. Two connections of
 * one process to one file (two schedulers, as tests and a gateway beside `hearth jobs` make) must
 * take turns here: the second's BEGIN IMMEDIATE would otherwise block the thread on busy_timeout
 * while the first waits for that same thread to commit.
 */
const turns = new Map<string, Promise<unknown>>();

export class SqliteSchedulerStorage implements SchedulerStorage {
  readonly wakeups: WakeupStore;

  constructor(private readonly db: Db) {
    this.wakeups = new WakeupStore(db);
  }

  /**
   * Runs `work` holding the database's write lock. Its awaits are of these synchronous statements,
   * so the transaction ends within the microtasks that began it; what other code of this process
   * writes on this connection meanwhile joins it (a write on another connection to the file waits,
   * as for any writer). A rollback comes only from a failing statement.
   */
  exclusive<T>(work: (tx: SchedulerRecords) => Promise<T>): Promise<T> {
    const file = this.db.name;
    const mine = (turns.get(file) ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        this.db.exec('BEGIN IMMEDIATE');
        try {
          const result = await work(this);
          this.db.exec('COMMIT');
          return result;
        } catch (err) {
          if (this.db.inTransaction) this.db.exec('ROLLBACK');
          throw err;
        }
      });
    const settled = mine.catch(() => undefined);
    turns.set(file, settled);
    void settled.then(() => {
      if (turns.get(file) === settled) turns.delete(file);
    });
    return mine;
  }

  /**
   * Takes or renews the scheduler lease. `acquired` when this owner did not hold it before (a
   * fresh start, or a takeover from a holder that stopped renewing); `held` when another has it.
   */
  async acquireLease(owner: string, pid: number, now: number, ttl: number): Promise<LeaseResult> {
    return this.db
      .transaction((): LeaseResult => {
        const row = this.db.prepare('SELECT owner, until FROM scheduler_lease WHERE name = ?').get(LEASE) as
          | { owner: string; until: number }
          | undefined;
        if (row && row.owner !== owner && row.until > now) return 'held';
        this.db
          .prepare(
            `INSERT INTO scheduler_lease (name, owner, pid, acquired_at, until) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, until = excluded.until,
             acquired_at = CASE WHEN scheduler_lease.owner = excluded.owner THEN scheduler_lease.acquired_at ELSE excluded.acquired_at END`,
          )
          .run(LEASE, owner, pid, now, now + ttl);
        return row?.owner === owner ? 'renewed' : 'acquired';
      })
      .immediate();
  }

  /** True while `owner` holds an unexpired lease (checked inside each claiming transaction). */
  async holdsLease(owner: string, now: number): Promise<boolean> {
    const row = this.db.prepare('SELECT owner, until FROM scheduler_lease WHERE name = ?').get(LEASE) as
      | { owner: string; until: number }
      | undefined;
    return row !== undefined && row.owner === owner && row.until > now;
  }

  async leaseHolder(now: number): Promise<{ owner: string; pid: number } | undefined> {
    return this.db
      .prepare('SELECT owner, pid FROM scheduler_lease WHERE name = ? AND until > ?')
      .get(LEASE, now) as { owner: string; pid: number } | undefined;
  }

  async releaseLease(owner: string): Promise<void> {
    this.db.prepare('DELETE FROM scheduler_lease WHERE name = ? AND owner = ?').run(LEASE, owner);
  }

  async jobState(id: string): Promise<JobStateRow | undefined> {
    const row = this.db
      .prepare(
        `SELECT id, definition, enabled_override AS enabledOverride, anchor_at AS anchorAt, cursor_at AS cursorAt
         FROM scheduler_jobs WHERE id = ?`,
      )
      .get(id) as (Omit<JobStateRow, 'enabledOverride'> & { enabledOverride: number | null }) | undefined;
    return (
      row && { ...row, enabledOverride: row.enabledOverride === null ? null : row.enabledOverride === 1 }
    );
  }

  /** The job's state, created on first sight: its interval anchor and cursor start now, nothing is owed before. */
  async ensureJob(id: string, now: number): Promise<JobStateRow> {
    this.db
      .prepare(
        `INSERT INTO scheduler_jobs (id, anchor_at, cursor_at, created_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (id) DO NOTHING`,
      )
      .run(id, now, now, now);
    return (await this.jobState(id))!;
  }

  /** Jobs added with `hearth jobs add`: their entries as stored. */
  async storedDefinitions(): Promise<Array<{ id: string; definition: string }>> {
    return this.db
      .prepare(
        'SELECT id, definition FROM scheduler_jobs WHERE definition IS NOT NULL ORDER BY created_at, id',
      )
      .all() as Array<{ id: string; definition: string }>;
  }

  async saveDefinition(id: string, definition: string, now: number): Promise<void> {
    await this.ensureJob(id, now);
    this.db.prepare('UPDATE scheduler_jobs SET definition = ? WHERE id = ?').run(definition, id);
  }

  /** Forgets a job and its progress; its runs stay as history. */
  async removeJob(id: string): Promise<void> {
    this.db.prepare('DELETE FROM scheduler_jobs WHERE id = ?').run(id);
  }

  async setEnabledOverride(id: string, enabled: boolean, now: number): Promise<void> {
    await this.ensureJob(id, now);
    this.db.prepare('UPDATE scheduler_jobs SET enabled_override = ? WHERE id = ?').run(enabled ? 1 : 0, id);
  }

  async moveCursor(id: string, cursorAt: number): Promise<void> {
    this.db.prepare('UPDATE scheduler_jobs SET cursor_at = ? WHERE id = ?').run(cursorAt, id);
  }

  async insertRun(run: NewRun, now: number, owner?: string, ttl?: number): Promise<number> {
    const result = this.db
      .prepare(
        `INSERT INTO scheduler_runs (kind, job_id, slot_at, ref, status, reason, caught_up, prompt, workspace,
           session_id, owner, lease_until, created_at, ended_at)
         VALUES (@kind, @jobId, @slotAt, @ref, @status, @reason, @caughtUp, @prompt, @workspace, @sessionId,
           @owner, @leaseUntil, @now, @endedAt)`,
      )
      .run({
        kind: run.kind,
        jobId: run.jobId ?? null,
        slotAt: run.slotAt ?? null,
        ref: run.ref ?? null,
        status: run.status,
        reason: run.reason ?? null,
        caughtUp: run.caughtUp ? 1 : 0,
        prompt: run.prompt ?? '',
        workspace: run.workspace ?? null,
        sessionId: run.sessionId ?? null,
        owner: owner ?? null,
        leaseUntil: ttl === undefined ? null : now + ttl,
        now,
        endedAt: run.status === 'skipped' ? now : null,
      });
    return Number(result.lastInsertRowid);
  }

  /** Queued → running, only for its owner: false when the lease was lost and another took the run over. */
  async startRun(id: number, owner: string, now: number, ttl: number): Promise<boolean> {
    const result = this.db
      .prepare(
        `UPDATE scheduler_runs SET status = 'running', started_at = ?, lease_until = ?
         WHERE id = ? AND owner = ? AND status = 'queued'`,
      )
      .run(now, now + ttl, id, owner);
    return result.changes === 1;
  }

  /** Queued → skipped, with the reason, only for its owner: its slot runs elsewhere. */
  async skipRun(id: number, owner: string, reason: string, now: number): Promise<boolean> {
    return this.leaveQueue(id, owner, "status = 'skipped', reason = ?, ended_at = ?", [reason, now]);
  }

  /** Sets `set` on a queued run of `owner`, which then holds no lease here; false when it was not queued. */
  private leaveQueue(id: number, owner: string, set: string, values: unknown[]): boolean {
    const result = this.db
      .prepare(
        `UPDATE scheduler_runs SET ${set}, lease_until = NULL WHERE id = ? AND owner = ? AND status = 'queued'`,
      )
      .run(...values, id, owner);
    return result.changes === 1;
  }

  /**
   * Records how a run ended. The run did happen, so its outcome is written even if a takeover
   * marked it interrupted meanwhile (a paused process that came back).
   */
  async finishRun(id: number, owner: string, outcome: RunOutcome, now: number): Promise<void> {
    this.finish('id = @id AND owner = @owner', { id, owner }, outcome, now);
  }

  /**
   * Marks a queued run as handed to the shared queue under `key`: running from now on, elsewhere,
   * with no lease of this process (a worker's lease covers it there). False when it was not queued.
   */
  async handOffRun(id: number, owner: string, now: number, key: string): Promise<boolean> {
    return this.leaveQueue(id, owner, "status = 'running', started_at = ?, queue_key = ?", [now, key]);
  }

  /** Runs a queue worker has and whose result has not been recorded yet, whoever handed them off. */
  async handedOff(): Promise<RunRow[]> {
    return (
      this.db
        .prepare(
          `SELECT ${RUN_COLUMNS} FROM scheduler_runs WHERE queue_key IS NOT NULL AND status = 'running' ORDER BY id`,
        )
        .all() as RawRun[]
    ).map(toRun);
  }

  /** Records the result a queue worker gave; false when it was recorded already. */
  async finishHandedOff(key: string, outcome: RunOutcome, now: number): Promise<boolean> {
    return this.finish("queue_key = @key AND status = 'running'", { key }, outcome, now);
  }

  private finish(where: string, params: Record<string, unknown>, outcome: RunOutcome, now: number): boolean {
    const result = this.db
      .prepare(
        `UPDATE scheduler_runs SET status = @status, reason = @reason, session_id = COALESCE(@sessionId, session_id),
           prompt_tokens = @promptTokens, completion_tokens = @completionTokens, ended_at = @now, lease_until = NULL,
           worker = COALESCE(@worker, worker), host = COALESCE(@host, host)
         WHERE ${where}`,
      )
      .run({
        ...params,
        now,
        status: outcome.status,
        reason: outcome.reason ?? null,
        sessionId: outcome.sessionId ?? null,
        promptTokens: outcome.promptTokens ?? 0,
        completionTokens: outcome.completionTokens ?? 0,
        worker: outcome.worker ?? null,
        host: outcome.host ?? null,
      });
    return result.changes > 0;
  }

  /** Where a running run's session is known before it ends (so a crash still points at it). */
  async noteSession(id: number, sessionId: string): Promise<void> {
    this.db.prepare('UPDATE scheduler_runs SET session_id = ? WHERE id = ?').run(sessionId, id);
  }

  async renewRunLeases(owner: string, now: number, ttl: number): Promise<void> {
    this.db
      .prepare(
        `UPDATE scheduler_runs SET lease_until = ? WHERE owner = ? AND status IN ('queued', 'running') AND queue_key IS NULL`,
      )
      .run(now + ttl, owner);
  }

  /**
   * After a process died: its running runs are recorded as failed (they may have done part of
   * their work, so they are not run again: at most once); its queued runs never started, so the
   * caller adopts them. Runs handed to the shared queue are a worker's, not the process's: left alone.
   */
  async recoverExpired(now: number, owner: string, ttl: number): Promise<RunRow[]> {
    const interrupted = this.db
      .prepare(
        `UPDATE scheduler_runs SET status = 'failed', ended_at = ?, lease_until = NULL,
           reason = 'interrupted: the process running it stopped before it ended'
         WHERE status = 'running' AND queue_key IS NULL AND lease_until < ? RETURNING ${RUN_COLUMNS}`,
      )
      .all(now, now) as RawRun[];
    this.db
      .prepare(
        `UPDATE scheduler_runs SET owner = ?, lease_until = ?
         WHERE status = 'queued' AND (owner IS NULL OR lease_until < ?)`,
      )
      .run(owner, now + ttl, now);
    return interrupted.map(toRun);
  }

  /** Queued runs of this owner, oldest slot first. */
  async queued(owner: string): Promise<RunRow[]> {
    return (
      this.db
        .prepare(
          `SELECT ${RUN_COLUMNS} FROM scheduler_runs WHERE status = 'queued' AND owner = ?
           ORDER BY COALESCE(slot_at, created_at), id`,
        )
        .all(owner) as RawRun[]
    ).map(toRun);
  }

  /** The run of an inbox file or a wake-up. */
  async byRef(kind: RunKind, ref: string): Promise<RunRow | undefined> {
    const row = this.db
      .prepare(
        `SELECT ${RUN_COLUMNS} FROM scheduler_runs WHERE kind = ? AND ref = ? ORDER BY id DESC LIMIT 1`,
      )
      .get(kind, ref) as RawRun | undefined;
    return row && toRun(row);
  }

  /** Queued and running runs of a job. */
  async openRuns(jobId: string): Promise<RunRow[]> {
    return (
      this.db
        .prepare(
          `SELECT ${RUN_COLUMNS} FROM scheduler_runs WHERE job_id = ? AND status IN ('queued', 'running') ORDER BY id`,
        )
        .all(jobId) as RawRun[]
    ).map(toRun);
  }

  async get(id: number): Promise<RunRow | undefined> {
    const row = this.db.prepare(`SELECT ${RUN_COLUMNS} FROM scheduler_runs WHERE id = ?`).get(id) as
      | RawRun
      | undefined;
    return row && toRun(row);
  }

  /** The latest runs, newest first; of one job, or of every kind. */
  async runs(filter: { jobId?: string; kind?: RunKind; limit?: number } = {}): Promise<RunRow[]> {
    const where = [filter.jobId ? 'job_id = @jobId' : '', filter.kind ? 'kind = @kind' : ''].filter(Boolean);
    return (
      this.db
        .prepare(
          `SELECT ${RUN_COLUMNS} FROM scheduler_runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
           ORDER BY COALESCE(slot_at, created_at) DESC, id DESC LIMIT @limit`,
        )
        .all({ jobId: filter.jobId, kind: filter.kind, limit: filter.limit ?? 20 }) as RawRun[]
    ).map(toRun);
  }

  /** Runs of a job that went (ended or going; skipped slots do not count): the seed's `run_count`. */
  async runCount(jobId: string): Promise<number> {
    return (
      this.db
        .prepare(
          "SELECT count(*) AS n FROM scheduler_runs WHERE job_id = ? AND status IN ('running', 'ok', 'failed')",
        )
        .get(jobId) as { n: number }
    ).n;
  }
}

type RawRun = Omit<RunRow, 'caughtUp'> & { caughtUp: number };

function toRun(row: RawRun): RunRow {
  return { ...row, caughtUp: row.caughtUp === 1 };
}
