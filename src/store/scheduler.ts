import type { Db } from './database.js';

export type RunKind = 'scheduled' | 'manual' | 'inbox' | 'wakeup';
export type RunStatus = 'queued' | 'running' | 'ok' | 'failed' | 'skipped';

export interface RunRow {
  id: number;
  kind: RunKind;
  jobId: string | null;
  /** The slot this run is for (scheduled runs only). */
  slotAt: number | null;
  /** The inbox file or the wake-up id. */
  ref: string | null;
  status: RunStatus;
  reason: string | null;
  /** A slot missed while no scheduler ran, made up later. */
  caughtUp: boolean;
  prompt: string;
  workspace: string | null;
  sessionId: string | null;
  /** The task's key in the shared queue, when a worker runs it (`hearth worker`). */
  queueKey: string | null;
  /** The worker and machine that ran a queued run. */
  worker: string | null;
  host: string | null;
  promptTokens: number;
  completionTokens: number;
  owner: string | null;
  leaseUntil: number | null;
  createdAt: number;
  startedAt: number | null;
  endedAt: number | null;
}

export type NewRun = Pick<RunRow, 'kind' | 'status'> &
  Partial<
    Pick<RunRow, 'jobId' | 'slotAt' | 'ref' | 'reason' | 'caughtUp' | 'prompt' | 'workspace' | 'sessionId'>
  >;

export interface JobStateRow {
  id: string;
  /** The entry of a job added with `hearth jobs add` (JSON); null for jobs from a cron.json. */
  definition: string | null;
  /** Set by `hearth jobs enable|disable`; null: as the definition says. */
  enabledOverride: boolean | null;
  anchorAt: number;
  cursorAt: number;
}

export interface RunOutcome {
  status: 'ok' | 'failed';
  reason?: string;
  sessionId?: string;
  promptTokens?: number;
  completionTokens?: number;
  /** Who ran it, when that was a queue worker. */
  worker?: string;
  host?: string;
}

const RUN_COLUMNS = `id, kind, job_id AS jobId, slot_at AS slotAt, ref, status, reason, caught_up AS caughtUp,
  prompt, workspace, session_id AS sessionId, queue_key AS queueKey, worker, host, prompt_tokens AS promptTokens,
  completion_tokens AS completionTokens, owner, lease_until AS leaseUntil, created_at AS createdAt,
  started_at AS startedAt, ended_at AS endedAt`;

const LEASE = 'scheduler';

/**
 * The scheduler's tables. Every decision about a slot is one IMMEDIATE transaction (`exclusive`):
 * SQLite lets one writer in at a time across processes, so what one process decided the next one
 * reads before deciding anything.
 */
export class SchedulerStore {
  constructor(private readonly db: Db) {}

  /** Runs `work` holding the database's write lock. */
  exclusive<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }

  /**
   * Takes or renews the scheduler lease. `acquired` when this owner did not hold it before (a
   * fresh start, or a takeover from a holder that stopped renewing); `held` when another has it.
   */
  acquireLease(owner: string, pid: number, now: number, ttl: number): 'acquired' | 'renewed' | 'held' {
    return this.exclusive(() => {
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
    });
  }

  /** True while `owner` holds an unexpired lease (checked inside each claiming transaction). */
  holdsLease(owner: string, now: number): boolean {
    const row = this.db.prepare('SELECT owner, until FROM scheduler_lease WHERE name = ?').get(LEASE) as
      | { owner: string; until: number }
      | undefined;
    return row !== undefined && row.owner === owner && row.until > now;
  }

  leaseHolder(): { owner: string; pid: number; acquiredAt: number; until: number } | undefined {
    return this.db
      .prepare('SELECT owner, pid, acquired_at AS acquiredAt, until FROM scheduler_lease WHERE name = ?')
      .get(LEASE) as { owner: string; pid: number; acquiredAt: number; until: number } | undefined;
  }

  releaseLease(owner: string): void {
    this.db.prepare('DELETE FROM scheduler_lease WHERE name = ? AND owner = ?').run(LEASE, owner);
  }

  jobState(id: string): JobStateRow | undefined {
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
  ensureJob(id: string, now: number): JobStateRow {
    this.db
      .prepare(
        `INSERT INTO scheduler_jobs (id, anchor_at, cursor_at, created_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (id) DO NOTHING`,
      )
      .run(id, now, now, now);
    return this.jobState(id)!;
  }

  /** Jobs added with `hearth jobs add`: their entries as stored. */
  storedDefinitions(): Array<{ id: string; definition: string }> {
    return this.db
      .prepare(
        'SELECT id, definition FROM scheduler_jobs WHERE definition IS NOT NULL ORDER BY created_at, id',
      )
      .all() as Array<{ id: string; definition: string }>;
  }

  saveDefinition(id: string, definition: string, now: number): void {
    this.ensureJob(id, now);
    this.db.prepare('UPDATE scheduler_jobs SET definition = ? WHERE id = ?').run(definition, id);
  }

  /** Forgets a job and its progress; its runs stay as history. */
  removeJob(id: string): void {
    this.db.prepare('DELETE FROM scheduler_jobs WHERE id = ?').run(id);
  }

  setEnabledOverride(id: string, enabled: boolean, now: number): void {
    this.ensureJob(id, now);
    this.db.prepare('UPDATE scheduler_jobs SET enabled_override = ? WHERE id = ?').run(enabled ? 1 : 0, id);
  }

  moveCursor(id: string, cursorAt: number): void {
    this.db.prepare('UPDATE scheduler_jobs SET cursor_at = ? WHERE id = ?').run(cursorAt, id);
  }

  insertRun(run: NewRun, now: number, owner?: string, leaseUntil?: number): number {
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
        leaseUntil: leaseUntil ?? null,
        now,
        endedAt: run.status === 'skipped' ? now : null,
      });
    return Number(result.lastInsertRowid);
  }

  /** Queued → running, only for its owner: false when the lease was lost and another took the run over. */
  startRun(id: number, owner: string, now: number, leaseUntil: number): boolean {
    const result = this.db
      .prepare(
        `UPDATE scheduler_runs SET status = 'running', started_at = ?, lease_until = ?
         WHERE id = ? AND owner = ? AND status = 'queued'`,
      )
      .run(now, leaseUntil, id, owner);
    return result.changes === 1;
  }

  /** Queued → skipped, with the reason, only for its owner: its slot runs elsewhere. */
  skipRun(id: number, owner: string, reason: string, now: number): boolean {
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
  finishRun(id: number, owner: string, outcome: RunOutcome, now: number): void {
    this.finish('id = @id AND owner = @owner', { id, owner }, outcome, now);
  }

  /**
   * Marks a queued run as handed to the shared queue under `key`: running from now on, elsewhere,
   * with no lease of this process (a worker's lease covers it there). False when it was not queued.
   */
  handOffRun(id: number, owner: string, now: number, key: string): boolean {
    return this.leaveQueue(id, owner, "status = 'running', started_at = ?, queue_key = ?", [now, key]);
  }

  /** Runs a queue worker has and whose result has not been recorded yet, whoever handed them off. */
  handedOff(): RunRow[] {
    return (
      this.db
        .prepare(
          `SELECT ${RUN_COLUMNS} FROM scheduler_runs WHERE queue_key IS NOT NULL AND status = 'running' ORDER BY id`,
        )
        .all() as RawRun[]
    ).map(toRun);
  }

  /** Records the result a queue worker gave; false when it was recorded already. */
  finishHandedOff(key: string, outcome: RunOutcome, now: number): boolean {
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
  noteSession(id: number, sessionId: string): void {
    this.db.prepare('UPDATE scheduler_runs SET session_id = ? WHERE id = ?').run(sessionId, id);
  }

  renewRunLeases(owner: string, until: number): void {
    this.db
      .prepare(
        `UPDATE scheduler_runs SET lease_until = ? WHERE owner = ? AND status IN ('queued', 'running') AND queue_key IS NULL`,
      )
      .run(until, owner);
  }

  /**
   * After a process died: its running runs are recorded as failed (they may have done part of
   * their work, so they are not run again: at most once); its queued runs never started, so the
   * caller adopts them. Runs handed to the shared queue are a worker's, not the process's: left alone.
   */
  recoverExpired(now: number, owner: string, leaseUntil: number): RunRow[] {
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
      .run(owner, leaseUntil, now);
    return interrupted.map(toRun);
  }

  /** Queued runs of this owner, oldest slot first. */
  queued(owner: string): RunRow[] {
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
  byRef(kind: RunKind, ref: string): RunRow | undefined {
    const row = this.db
      .prepare(
        `SELECT ${RUN_COLUMNS} FROM scheduler_runs WHERE kind = ? AND ref = ? ORDER BY id DESC LIMIT 1`,
      )
      .get(kind, ref) as RawRun | undefined;
    return row && toRun(row);
  }

  /** Queued and running runs of a job. */
  openRuns(jobId: string): RunRow[] {
    return (
      this.db
        .prepare(
          `SELECT ${RUN_COLUMNS} FROM scheduler_runs WHERE job_id = ? AND status IN ('queued', 'running') ORDER BY id`,
        )
        .all(jobId) as RawRun[]
    ).map(toRun);
  }

  get(id: number): RunRow | undefined {
    const row = this.db.prepare(`SELECT ${RUN_COLUMNS} FROM scheduler_runs WHERE id = ?`).get(id) as
      | RawRun
      | undefined;
    return row && toRun(row);
  }

  /** The latest runs, newest first; of one job, or of every kind. */
  runs(filter: { jobId?: string; kind?: RunKind; limit?: number } = {}): RunRow[] {
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
  runCount(jobId: string): number {
    return (
      this.db
        .prepare(
          "SELECT count(*) AS n FROM scheduler_runs WHERE job_id = ? AND status IN ('running', 'ok', 'failed')",
        )
        .get(jobId) as { n: number }
    ).n;
  }

  /** How each job's last run ended and how many slots were missed since it last ran: for `jobs list`. */
  lastRun(jobId: string): RunRow | undefined {
    return this.runs({ jobId, limit: 1 })[0];
  }
}

type RawRun = Omit<RunRow, 'caughtUp'> & { caughtUp: number };

function toRun(row: RawRun): RunRow {
  return { ...row, caughtUp: row.caughtUp === 1 };
}
