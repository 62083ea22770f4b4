/**
 * Gateway turns run by `hearth worker`s (`gateway.turns: workers`), in the shared database. A
 * turn is a task of the work queue (work-queue.ts) whose graphile-worker queue is its session's,
 * so a session's turns run one at a time and in order whichever gateway queued them; graphile-
 * worker claims, retries and (with worker.ts's leases) hands a dead worker's turn to another.
 *
 * Beside the queue: a row per turn (which session, which worker runs it, how many messages the
 * session had when the turn first started, so a retry knows whether its message is stored), and
 * the orders people send while it runs (steer, abort, an approval's answer). An order is a row;
 * its insert NOTIFYs `hearth_turn_orders` (migration 10), which the worker running the turn
 * listens on. The gateway that queued it waits for the task's result (`hearth_task_done`).
 */
import { hostname } from 'node:os';
import { inTransaction, type PgPool } from '../store/postgres/connection.js';
import { PgListener } from '../store/postgres/listener.js';
import { type QueuedTurn, type TaskResult, WorkQueue } from '../store/postgres/queue.js';

export type TurnOrder =
  | { kind: 'steer'; text: string }
  | { kind: 'abort' }
  | { kind: 'answer'; callId: string; decision: 'once' | 'always' | 'deny'; reason?: string };

/** A turn a worker runs now (or ran, until another worker takes it up again). */
export interface RunningTurn {
  key: string;
  worker: string;
  /** The session's last event before this try's own. */
  startedSeq: number;
}

/** What a worker learns as it starts a turn: its try, and the session's length before the first. */
export interface TurnStart {
  attempt: number;
  messagesBefore: number;
}

/**
 * A result nobody NOTIFYs (graphile-worker gave up on the task: its worker threw at every try)
 * is noticed by this slow check; every other result wakes its waiter at once.
 */
const GAVE_UP_CHECK_MS = 30_000;

export class TurnQueue {
  /** Opened at the first turn queued or waited for: a worker, and a gateway that runs turns itself, need none. */
  private queue: Promise<WorkQueue> | undefined;
  private readonly waiting = new Map<string, Array<(result: TaskResult) => void>>();
  private results: PgListener | undefined;
  private orders: PgListener | undefined;
  private readonly watched = new Map<string, { after: number; apply: (order: TurnOrder) => Promise<void> }>();
  private check: NodeJS.Timeout | undefined;

  /**
   * @param pool the shared database's pool (the session storage's; not closed here)
   * @param url the same database, for the LISTEN connections and the work queue
   */
  constructor(
    private readonly pool: PgPool,
    private readonly url: string,
    private readonly onProblem: (message: string) => void = () => undefined,
  ) {}

  private work(): Promise<WorkQueue> {
    if (!this.queue) {
      this.queue = WorkQueue.open(this.pool);
      this.queue.catch(() => {
        this.queue = undefined; // the database may be back next time
      });
    }
    return this.queue;
  }

  /** Queues a turn of `turn.session`; resolves to its key. */
  async add(
    turn: QueuedTurn,
    where: { workspace: string; tags: string[]; description: string },
  ): Promise<string> {
    const queue = await this.work();
    return queue.add({ task: where.description, workspace: where.workspace, tags: where.tags, turn });
  }

  /** Resolves with the turn's result once a worker recorded it (or the queue gave up on it). */
  result(key: string): Promise<TaskResult> {
    const promise = new Promise<TaskResult>((resolve) => {
      const list = this.waiting.get(key) ?? [];
      list.push(resolve);
      this.waiting.set(key, list);
    });
    this.listenForResults();
    // Recorded before the listener listened: found by this look.
    void this.settle([key]);
    return promise;
  }

  /** How many live workers could take a task with these tags (each has all of them). */
  async takers(tags: string[]): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      'select count(*)::int as n from hearth_workers where lease_until > now() and tags @> $1::text[]',
      [tags],
    );
    return rows[0]?.n ?? 0;
  }

  /** The turn of `session` a worker has taken up and not finished; undefined when none. */
  async running(session: string): Promise<RunningTurn | undefined> {
    const { rows } = await this.pool.query<{ key: string; worker: string; started_seq: number }>(
      `select key, worker, started_seq from hearth_turns
       where session_id = $1 and worker is not null and finished_at is null order by started_at desc limit 1`,
      [session],
    );
    const row = rows[0];
    return row && { key: row.key, worker: row.worker, startedSeq: row.started_seq };
  }

  /** Sends an order to the worker running turn `key`. */
  async order(key: string, order: TurnOrder): Promise<void> {
    const { kind, ...body } = order;
    await this.pool.query('insert into hearth_turn_orders (turn_key, kind, body) values ($1, $2, $3)', [
      key,
      kind,
      JSON.stringify(body),
    ]);
  }

  /**
   * True when an earlier turn of `session` than `key` has not finished and its job will still run:
   * graphile-worker lets a session's later job run while a failed one waits for its retry, and a
   * session's turns must keep their order (the worker puts this one back to wait).
   */
  async behindEarlier(key: string, session: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `select 1 from hearth_turns t join graphile_worker.jobs j on j.key = t.key
       where t.session_id = $2 and t.key <> $1 and t.finished_at is null and j.attempts < j.max_attempts
         and t.queued_at < (select queued_at from hearth_turns where key = $1)
       limit 1`,
      [key, session],
    );
    return (rowCount ?? 0) > 0;
  }

  /**
   * A worker takes up turn `key`: names itself and where the session's events stood, counts the
   * try, and keeps the first try's message count. Undefined when the turn was taken back.
   */
  async start(
    key: string,
    worker: string,
    at: { messages: number; seq: number },
  ): Promise<TurnStart | undefined> {
    const { rows } = await this.pool.query<{ attempts: number; messages_before: number }>(
      `update hearth_turns set worker = $2, started_at = now(), finished_at = null, attempts = attempts + 1,
         started_seq = $4,
         messages_before = coalesce(messages_before, $3)
       where key = $1 and (started_at is not null or finished_at is null) returning attempts, messages_before`,
      [key, worker, at.messages, at.seq],
    );
    const row = rows[0];
    if (!row) return undefined; // taken back before any worker started it (`withdraw`)
    return { attempt: row.attempts, messagesBefore: row.messages_before };
  }

  /**
   * Takes back turn `key` when no worker has started it: it never runs, and `detail` is recorded
   * as its result, which wakes whoever waits for it. False when a worker has started it (stop it
   * with an order then). A worker that claimed its job meanwhile finds it taken back (`start`).
   */
  async withdraw(key: string, detail: unknown): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const taken = await client.query(
        'update hearth_turns set finished_at = now() where key = $1 and started_at is null and finished_at is null',
        [key],
      );
      if (taken.rowCount === 0) return false;
      await client.query(
        `insert into hearth_task_results (key, status, reason, worker, host, detail)
         values ($1, 'ok', 'stopped before a worker took it up', '', $2, $3) on conflict (key) do nothing`,
        [key, hostname(), JSON.stringify(detail)],
      );
      // Deleted when no worker claimed it yet; else never tried again once that worker lets it go.
      await client.query('select graphile_worker.remove_job($1)', [key]);
      return true;
    });
  }

  async finish(key: string): Promise<void> {
    await this.pool.query('update hearth_turns set finished_at = now() where key = $1', [key]);
  }

  /**
   * Forgets turns that finished more than `keepSeconds` ago and that the queue will not try again,
   * with their task, claims and result (whose `detail` holds the whole reply): a gateway has long
   * had its answer, and every message of every session would otherwise stay a row forever. Orders
   * go with their turn (on delete cascade); so do sessions' graphile-worker queues no job uses.
   * Resolves to how many turns went.
   */
  async prune(keepSeconds: number): Promise<number> {
    await (await this.work()).collectQueues();
    const { rows } = await this.pool.query<{ n: number }>(
      `with old as (
         delete from hearth_turns t
         where finished_at < now() - make_interval(secs => $1)
           and not exists (select 1 from graphile_worker.jobs j where j.key = t.key)
         returning key),
       results as (delete from hearth_task_results where key in (select key from old)),
       claims as (delete from hearth_task_claims where key in (select key from old)),
       tasks as (delete from hearth_tasks where key in (select key from old))
       select count(*)::int as n from old`,
      [keepSeconds],
    );
    return rows[0]?.n ?? 0;
  }

  /**
   * Messages steered into turn `key` that it did not take (they came after its last step) go to
   * the session's next queued turn, as a local run's would; false when none is queued.
   */
  async carry(key: string, session: string, texts: readonly string[]): Promise<boolean> {
    const { rows } = await this.pool.query<{ key: string }>(
      `select key from hearth_turns where session_id = $1 and started_at is null and key <> $2
       order by queued_at limit 1`,
      [session, key],
    );
    const next = rows[0];
    if (!next) return false;
    for (const text of texts) await this.order(next.key, { kind: 'steer', text });
    return true;
  }

  /**
   * Hands `apply` every order sent to turn `key`, those sent before this call first, in the order
   * they were sent, each once, and marks each applied once `apply` resolved. Returns the function
   * that stops it.
   */
  follow(key: string, apply: (order: TurnOrder) => Promise<void>): () => void {
    this.watched.set(key, { after: 0, apply });
    this.orders ??= new PgListener({
      url: this.url,
      channel: 'hearth_turn_orders',
      onNotify: (payload) => void this.deliver(payload),
      // Orders sent while it did not listen are read now.
      onListening: () => {
        for (const watched of this.watched.keys()) void this.deliver(watched);
      },
      onProblem: this.onProblem,
    });
    void this.deliver(key);
    return () => void this.watched.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.check);
    await Promise.all([this.results?.close(), this.orders?.close()]);
    await (await this.queue?.catch(() => undefined))?.close();
  }

  private async deliver(key: string): Promise<void> {
    const watched = this.watched.get(key);
    if (!watched) return;
    try {
      const { rows } = await this.pool.query<{ id: string; kind: TurnOrder['kind']; body: object }>(
        'select id, kind, body from hearth_turn_orders where turn_key = $1 and id > $2 order by id',
        [key, watched.after],
      );
      for (const row of rows) {
        // Two reads at once (a notice and the first look) may both find an order: applied once.
        if (Number(row.id) <= watched.after) continue;
        watched.after = Number(row.id);
        await watched.apply({ kind: row.kind, ...row.body } as TurnOrder);
        await this.pool.query('update hearth_turn_orders set applied_at = now() where id = $1', [row.id]);
      }
    } catch (err) {
      this.onProblem(`Could not read the orders of turn ${key}: ${(err as Error).message}`);
    }
  }

  private listenForResults(): void {
    if (this.results) return;
    this.results = new PgListener({
      url: this.url,
      channel: 'hearth_task_done',
      onNotify: (key) => {
        if (this.waiting.has(key)) void this.settle([key]);
      },
      onListening: () => void this.settle([...this.waiting.keys()]),
      onProblem: this.onProblem,
    });
    this.check = setInterval(() => void this.settle([...this.waiting.keys()]), GAVE_UP_CHECK_MS);
    this.check.unref();
  }

  private async settle(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    try {
      const queue = await this.work();
      for (const [key, result] of await queue.results(keys)) {
        const list = this.waiting.get(key);
        this.waiting.delete(key);
        for (const resolve of list ?? []) resolve(result);
      }
    } catch (err) {
      // The database is away: the listener's next LISTEN looks again.
      this.onProblem(`Could not read the results of queued turns: ${(err as Error).message}`);
    }
  }
}
