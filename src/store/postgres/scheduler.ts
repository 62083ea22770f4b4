/**
 * The scheduler's records in the database several machines share (migration 9; the interface is
 * ../scheduler-storage.ts). Every machine's scheduler records its runs here, so `hearth jobs runs`
 * and the gateway show them all, and a slot is one row whoever decides it: the claiming
 * transactions of all schedulers take one advisory lock, as SQLite's IMMEDIATE transactions take
 * the file's write lock, and a unique index keeps one row per job and slot whatever happens.
 *
 * Each Hearth home has its own lease (`scope`): the jobs of its cron.json and its inbox are
 * scheduled by one process of that home, while the jobs stored here (`hearth jobs add`) are
 * decided by whichever scheduler comes first. Lease expiries (the scheduler's and each run's) are
 * on the server's clock, `hearth_now_ms()`: a run whose machine died is recovered by another once
 * its lease has lapsed there, however far the machines' own clocks drift apart.
 */

import { hostname } from 'node:os';
import type pg from 'pg';
import type { JobStateRow, NewRun, RunKind, RunOutcome, RunRow } from '../rows.js';
import type {
  LeaseResult,
  SchedulerRecords,
  SchedulerStorage,
  SchedulerStorageOptions,
} from '../scheduler-storage.js';
import { inTransaction, leaseNow, type PgPool } from './connection.js';
import { PostgresWakeups } from './wakeups.js';

/** A pool, or the one connection of a transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
}

/** Any fixed number: the claiming transactions of every scheduler on the database take it. */
const CLAIM_LOCK = 0x4865_6172 + 1;

/** An inbox run's ref is kept as `SCOPE/NAME` (see `inboxRef`) and read back as the file's name. */
const RUN_COLUMNS = `id::float8 AS id, kind, job_id AS "jobId", slot_at::float8 AS "slotAt",
  CASE WHEN kind = 'inbox' THEN regexp_replace(ref, '^.*/', '') ELSE ref END AS ref, status, reason,
  caught_up AS "caughtUp", prompt, workspace, session_id AS "sessionId", queue_key AS "queueKey", worker, host,
  prompt_tokens AS "promptTokens", completion_tokens AS "completionTokens", owner,
  lease_until::float8 AS "leaseUntil", created_at::float8 AS "createdAt", started_at::float8 AS "startedAt",
  ended_at::float8 AS "endedAt"`;

const JOB_COLUMNS = `id, definition, enabled_override AS "enabledOverride", anchor_at::float8 AS "anchorAt",
  cursor_at::float8 AS "cursorAt"`;

class PostgresSchedulerRecords implements SchedulerRecords {
  readonly wakeups: PostgresWakeups;

  constructor(
    protected readonly db: Queryable,
    protected readonly options: SchedulerStorageOptions,
  ) {
    this.wakeups = new PostgresWakeups(db);
  }

  private get lease(): string {
    return `scheduler ${this.options.scope}`;
  }

  /**
   * Inbox files are a Hearth home's (two machines may each have a `todo.txt`): their runs' refs
   * are kept under the home's scope, so each home finds only its own.
   */
  private ref(kind: RunKind, ref: string | null): string | null {
    return kind === 'inbox' && ref !== null ? `${this.options.scope}/${ref}` : ref;
  }

  /** The caller's time when leases follow it (tests on simulated time), else null: the server's. */
  private clock(now: number): number | null {
    return this.options.leaseClock === 'caller' ? now : null;
  }

  /**
   * A renewal never shortens the holder's lease: one sent before a take of this holder may reach
   * the database after it (two connections of the pool), and its older time must not win.
   */
  async acquireLease(owner: string, pid: number, now: number, ttl: number): Promise<LeaseResult> {
    const { rows } = await this.db.query<{ previous: string | null }>(
      `WITH prev AS (SELECT owner FROM hearth_scheduler_lease WHERE name = $1)
       INSERT INTO hearth_scheduler_lease AS l (name, owner, pid, host, acquired_at, until)
         VALUES ($1, $2, $3, $4, $5, ${leaseNow(6)} + $7)
       ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, host = excluded.host,
         until = CASE WHEN l.owner = excluded.owner THEN GREATEST(l.until, excluded.until) ELSE excluded.until END,
         acquired_at = CASE WHEN l.owner = excluded.owner THEN l.acquired_at ELSE excluded.acquired_at END
         WHERE l.owner = excluded.owner OR l.until <= ${leaseNow(6)}
       RETURNING (SELECT owner FROM prev) AS previous`,
      [this.lease, owner, pid, hostname(), now, this.clock(now), ttl],
    );
    if (rows.length === 0) return 'held';
    return rows[0]!.previous === owner ? 'renewed' : 'acquired';
  }

  async holdsLease(owner: string, now: number): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `SELECT 1 FROM hearth_scheduler_lease WHERE name = $1 AND owner = $2 AND until > ${leaseNow(3)}`,
      [this.lease, owner, this.clock(now)],
    );
    return rowCount === 1;
  }

  async leaseHolder(now: number): Promise<{ owner: string; pid: number } | undefined> {
    const { rows } = await this.db.query<{ owner: string; pid: number }>(
      `SELECT owner, pid FROM hearth_scheduler_lease WHERE name = $1 AND until > ${leaseNow(2)}`,
      [this.lease, this.clock(now)],
    );
    return rows[0];
  }

  async releaseLease(owner: string): Promise<void> {
    await this.db.query('DELETE FROM hearth_scheduler_lease WHERE name = $1 AND owner = $2', [
      this.lease,
      owner,
    ]);
  }

  async jobState(id: string): Promise<JobStateRow | undefined> {
    const { rows } = await this.db.query<JobStateRow>(
      `SELECT ${JOB_COLUMNS} FROM hearth_scheduler_jobs WHERE id = $1`,
      [id],
    );
    return rows[0];
  }

  async ensureJob(id: string, now: number): Promise<JobStateRow> {
    await this.db.query(
      `INSERT INTO hearth_scheduler_jobs (id, anchor_at, cursor_at, created_at) VALUES ($1, $2, $2, $2)
       ON CONFLICT (id) DO NOTHING`,
      [id, now],
    );
    return (await this.jobState(id))!;
  }

  async storedDefinitions(): Promise<Array<{ id: string; definition: string }>> {
    const { rows } = await this.db.query<{ id: string; definition: string }>(
      'SELECT id, definition FROM hearth_scheduler_jobs WHERE definition IS NOT NULL ORDER BY created_at, id',
    );
    return rows;
  }

  async saveDefinition(id: string, definition: string, now: number): Promise<void> {
    await this.db.query(
      `INSERT INTO hearth_scheduler_jobs (id, definition, anchor_at, cursor_at, created_at) VALUES ($1, $2, $3, $3, $3)
       ON CONFLICT (id) DO UPDATE SET definition = excluded.definition`,
      [id, definition, now],
    );
  }

  async removeJob(id: string): Promise<void> {
    await this.db.query('DELETE FROM hearth_scheduler_jobs WHERE id = $1', [id]);
  }

  async setEnabledOverride(id: string, enabled: boolean, now: number): Promise<void> {
    await this.db.query(
      `INSERT INTO hearth_scheduler_jobs (id, enabled_override, anchor_at, cursor_at, created_at)
         VALUES ($1, $2, $3, $3, $3)
       ON CONFLICT (id) DO UPDATE SET enabled_override = excluded.enabled_override`,
      [id, enabled, now],
    );
  }

  async moveCursor(id: string, cursorAt: number): Promise<void> {
    await this.db.query('UPDATE hearth_scheduler_jobs SET cursor_at = $2 WHERE id = $1', [id, cursorAt]);
  }

  async insertRun(run: NewRun, now: number, owner?: string, ttl?: number): Promise<number> {
    const { rows } = await this.db.query<{ id: number }>(
      `INSERT INTO hearth_scheduler_runs (kind, job_id, slot_at, ref, status, reason, caught_up, prompt, workspace,
         session_id, owner, lease_until, created_at, ended_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
         CASE WHEN $12::bigint IS NULL THEN NULL ELSE ${leaseNow(13)} + $12 END, $14, $15)
       RETURNING id::float8 AS id`,
      [
        run.kind,
        run.jobId ?? null,
        run.slotAt ?? null,
        this.ref(run.kind, run.ref ?? null),
        run.status,
        run.reason ?? null,
        run.caughtUp === true,
        run.prompt ?? '',
        run.workspace ?? null,
        run.sessionId ?? null,
        owner ?? null,
        ttl ?? null,
        this.clock(now),
        now,
        run.status === 'skipped' ? now : null,
      ],
    );
    return rows[0]!.id;
  }

  async startRun(id: number, owner: string, now: number, ttl: number): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `UPDATE hearth_scheduler_runs SET status = 'running', started_at = $3, lease_until = ${leaseNow(4)} + $5
       WHERE id = $1 AND owner = $2 AND status = 'queued'`,
      [id, owner, now, this.clock(now), ttl],
    );
    return rowCount === 1;
  }

  skipRun(id: number, owner: string, reason: string, now: number): Promise<boolean> {
    return this.leaveQueue(id, owner, "status = 'skipped', reason = $3, ended_at = $4", [reason, now]);
  }

  handOffRun(id: number, owner: string, now: number, key: string): Promise<boolean> {
    return this.leaveQueue(id, owner, "status = 'running', started_at = $3, queue_key = $4", [now, key]);
  }

  /** Sets `set` (parameters from $3) on a queued run of `owner`, which then holds no lease; false when it was not queued. */
  private async leaveQueue(id: number, owner: string, set: string, values: unknown[]): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `UPDATE hearth_scheduler_runs SET ${set}, lease_until = NULL
       WHERE id = $1 AND owner = $2 AND status = 'queued'`,
      [id, owner, ...values],
    );
    return rowCount === 1;
  }

  async finishRun(id: number, owner: string, outcome: RunOutcome, now: number): Promise<void> {
    await this.finish('id = $9 AND owner = $10', [id, owner], outcome, now);
  }

  async handedOff(): Promise<RunRow[]> {
    const { rows } = await this.db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM hearth_scheduler_runs WHERE queue_key IS NOT NULL AND status = 'running' ORDER BY id`,
    );
    return rows;
  }

  finishHandedOff(key: string, outcome: RunOutcome, now: number): Promise<boolean> {
    return this.finish("queue_key = $9 AND status = 'running'", [key], outcome, now);
  }

  /** Writes the outcome on the runs `where` (parameters from $9) picks. */
  private async finish(where: string, params: unknown[], outcome: RunOutcome, now: number): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `UPDATE hearth_scheduler_runs SET status = $1, reason = $2, session_id = COALESCE($3, session_id),
         prompt_tokens = $4, completion_tokens = $5, ended_at = $6, lease_until = NULL,
         worker = COALESCE($7, worker), host = COALESCE($8, host)
       WHERE ${where}`,
      [
        outcome.status,
        outcome.reason ?? null,
        outcome.sessionId ?? null,
        outcome.promptTokens ?? 0,
        outcome.completionTokens ?? 0,
        now,
        outcome.worker ?? null,
        outcome.host ?? null,
        ...params,
      ],
    );
    return (rowCount ?? 0) > 0;
  }

  async noteSession(id: number, sessionId: string): Promise<void> {
    await this.db.query('UPDATE hearth_scheduler_runs SET session_id = $2 WHERE id = $1', [id, sessionId]);
  }

  async renewRunLeases(owner: string, now: number, ttl: number): Promise<void> {
    await this.db.query(
      `UPDATE hearth_scheduler_runs SET lease_until = ${leaseNow(2)} + $3
       WHERE owner = $1 AND status IN ('queued', 'running') AND queue_key IS NULL`,
      [owner, this.clock(now), ttl],
    );
  }

  async recoverExpired(now: number, owner: string, ttl: number): Promise<RunRow[]> {
    const { rows } = await this.db.query<RunRow>(
      `UPDATE hearth_scheduler_runs SET status = 'failed', ended_at = $1, lease_until = NULL,
         reason = 'interrupted: the process running it stopped before it ended'
       WHERE status = 'running' AND queue_key IS NULL AND lease_until < ${leaseNow(2)}
       RETURNING ${RUN_COLUMNS}`,
      [now, this.clock(now)],
    );
    await this.db.query(
      `UPDATE hearth_scheduler_runs SET owner = $1, lease_until = ${leaseNow(2)} + $3
       WHERE status = 'queued' AND (owner IS NULL OR lease_until < ${leaseNow(2)})`,
      [owner, this.clock(now), ttl],
    );
    return rows;
  }

  async queued(owner: string): Promise<RunRow[]> {
    const { rows } = await this.db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM hearth_scheduler_runs WHERE status = 'queued' AND owner = $1
       ORDER BY COALESCE(slot_at, created_at), id`,
      [owner],
    );
    return rows;
  }

  async byRef(kind: RunKind, ref: string): Promise<RunRow | undefined> {
    const { rows } = await this.db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM hearth_scheduler_runs WHERE kind = $1 AND ref = $2 ORDER BY id DESC LIMIT 1`,
      [kind, this.ref(kind, ref)],
    );
    return rows[0];
  }

  async openRuns(jobId: string): Promise<RunRow[]> {
    const { rows } = await this.db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM hearth_scheduler_runs WHERE job_id = $1 AND status IN ('queued', 'running')
       ORDER BY id`,
      [jobId],
    );
    return rows;
  }

  async get(id: number): Promise<RunRow | undefined> {
    const { rows } = await this.db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM hearth_scheduler_runs WHERE id = $1`,
      [id],
    );
    return rows[0];
  }

  async runs(filter: { jobId?: string; kind?: RunKind; limit?: number } = {}): Promise<RunRow[]> {
    const { rows } = await this.db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM hearth_scheduler_runs
       WHERE ($1::text IS NULL OR job_id = $1) AND ($2::text IS NULL OR kind = $2)
       ORDER BY COALESCE(slot_at, created_at) DESC, id DESC LIMIT $3`,
      [filter.jobId ?? null, filter.kind ?? null, filter.limit ?? 20],
    );
    return rows;
  }

  async runCount(jobId: string): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM hearth_scheduler_runs
       WHERE job_id = $1 AND status IN ('running', 'ok', 'failed')`,
      [jobId],
    );
    return rows[0]!.n;
  }
}

export class PostgresSchedulerStorage extends PostgresSchedulerRecords implements SchedulerStorage {
  constructor(
    private readonly pool: PgPool,
    options: SchedulerStorageOptions,
  ) {
    super(pool, options);
  }

  exclusive<T>(work: (tx: SchedulerRecords) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [CLAIM_LOCK]);
      return work(new PostgresSchedulerRecords(client, this.options));
    });
  }
}
