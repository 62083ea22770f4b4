/**
 * Hearth's own tables in PostgreSQL, as an append-only list like the SQLite one
 * (src/store/migrations.ts): entry N brings the schema from version N to N+1. Never edit an entry
 * that has shipped; append a new one.
 */
import type pg from 'pg';

import { postgresMigrations1To6 } from './migrations-1-to-6.js';

export const postgresMigrations: readonly string[] = [
  // 1–6: the work queue, its notifications, the event log, memory, scheduler slots, the pipeline.
  ...postgresMigrations1To6,
  // 7: sessions and everything kept with them (src/store/postgres/sessions.ts), as in SQLite.
  // Times are milliseconds since the epoch like SQLite's; `ord` breaks ties as SQLite's rowid does.
  // A message body is the JSON text as written: re-encoding it (jsonb) would reorder keys and
  // change the prompt a resumed session sends.
  `create table hearth_sessions (
     id text primary key,
     ord bigserial not null,
     title text not null default '',
     workspace text not null,
     model text not null default '',
     parent_id text references hearth_sessions(id) on delete set null,
     depth integer not null default 0,
     status text not null default 'active',
     created_at bigint not null,
     updated_at bigint not null
   );
   create index hearth_sessions_workspace on hearth_sessions (workspace, updated_at);
   create index hearth_sessions_parent on hearth_sessions (parent_id);
   create table hearth_messages (
     session_id text not null references hearth_sessions(id) on delete cascade,
     seq integer not null,
     role text not null,
     body text not null,
     created_at bigint not null,
     primary key (session_id, seq)
   );
   create table hearth_usage (
     id bigserial primary key,
     session_id text not null references hearth_sessions(id) on delete cascade,
     model text not null,
     prompt_tokens integer not null,
     completion_tokens integer not null,
     duration_ms integer not null,
     created_at bigint not null
   );
   create index hearth_usage_session on hearth_usage (session_id);
   create table hearth_audit (
     id bigserial primary key,
     session_id text not null references hearth_sessions(id) on delete cascade,
     tool text not null,
     arguments text not null,
     decision text not null,
     rule text,
     duration_ms integer,
     exit_code integer,
     created_at bigint not null
   );
   create index hearth_audit_session on hearth_audit (session_id);
   create table hearth_session_state (
     session_id text not null references hearth_sessions(id) on delete cascade,
     key text not null,
     value text not null,
     primary key (session_id, key)
   );
   create table hearth_tool_outputs (
     session_id text not null references hearth_sessions(id) on delete cascade,
     call_id text not null,
     body text not null,
     primary key (session_id, call_id)
   );
   -- One round trip per message, and the next seq without a gap or a clash however many processes
   -- append: the session row's lock orders them, and the max is read after it (a function's
   -- statements each see what committed before them).
   create function hearth_append_message(p_session text, p_role text, p_body text, p_now bigint)
     returns integer language plpgsql as $$
   declare
     next_seq integer;
   begin
     update hearth_sessions set updated_at = p_now where id = p_session;
     if not found then
       raise exception 'No session %.', p_session using errcode = 'no_data_found';
     end if;
     select coalesce(max(seq), -1) + 1 into next_seq from hearth_messages where session_id = p_session;
     insert into hearth_messages (session_id, seq, role, body, created_at)
       values (p_session, next_seq, p_role, p_body, p_now);
     return next_seq;
   end $$;`,
  // 8: a session's run lease (src/store/postgres/run-leases.ts): who runs it now, until when.
  // Expiries are the holder's epoch milliseconds, compared with the taker's clock.
  `create table hearth_session_leases (
     session_id text primary key references hearth_sessions(id) on delete cascade,
     instance text not null,
     host text not null,
     pid integer not null,
     label text not null,
     expires_at bigint not null
   );`,
  // 9: the scheduler's records (src/store/postgres/scheduler.ts, wakeups.ts), shared by the
  // schedulers of every machine: one lease per Hearth home, the jobs' progress, one row per run
  // (a slot once, by the unique index), wake-ups. Times are epoch milliseconds; lease expiries
  // are on the server's clock (hearth_now_ms), which every machine reads alike.
  `create function hearth_now_ms() returns bigint language sql volatile as $$
     select (extract(epoch from clock_timestamp()) * 1000)::bigint $$;
   create table hearth_scheduler_lease (
     name text primary key,
     owner text not null,
     pid integer not null,
     host text not null,
     acquired_at bigint not null,
     until bigint not null
   );
   create table hearth_scheduler_jobs (
     id text primary key,
     definition text,
     enabled_override boolean,
     anchor_at bigint not null,
     cursor_at bigint not null,
     created_at bigint not null
   );
   create table hearth_scheduler_runs (
     id bigserial primary key,
     kind text not null,
     job_id text,
     slot_at bigint,
     ref text,
     status text not null,
     reason text,
     caught_up boolean not null default false,
     prompt text not null default '',
     workspace text,
     session_id text,
     queue_key text,
     worker text,
     host text,
     prompt_tokens integer not null default 0,
     completion_tokens integer not null default 0,
     owner text,
     lease_until bigint,
     created_at bigint not null,
     started_at bigint,
     ended_at bigint,
     -- The SQLite run it was copied from (\`hearth storage migrate\`): copied once.
     copied_from text unique
   );
   create unique index hearth_scheduler_runs_slot on hearth_scheduler_runs (job_id, slot_at) where slot_at is not null;
   create index hearth_scheduler_runs_job on hearth_scheduler_runs (job_id, id);
   create unique index hearth_scheduler_runs_inbox on hearth_scheduler_runs (ref) where kind = 'inbox';
   create index hearth_scheduler_runs_open on hearth_scheduler_runs (status) where status in ('queued', 'running');
   create index hearth_scheduler_runs_handed_off on hearth_scheduler_runs (queue_key)
     where queue_key is not null and status = 'running';
   create table hearth_wakeups (
     id text primary key,
     session_id text not null references hearth_sessions(id) on delete cascade,
     at bigint not null,
     message text not null,
     status text not null default 'pending',
     created_at bigint not null
   );
   create index hearth_wakeups_due on hearth_wakeups (status, at);`,
  // 10: gateway turns queued to workers (src/cluster/turn-queue.ts): a task's result carries the
  // turn's own (the reply the gateway returns); a turn row says which session it belongs to and
  // which worker runs it; orders (steer, abort, approvals) sent to any gateway wait in a table
  // whose inserts wake the worker running that turn.
  `alter table hearth_task_results add column if not exists detail jsonb;
   create table if not exists hearth_turns (
     key text primary key,
     session_id text not null,
     worker text,
     attempts integer not null default 0,
     messages_before integer,
     started_seq integer,
     queued_at timestamptz not null default now(),
     started_at timestamptz,
     finished_at timestamptz
   );
   create index if not exists hearth_turns_open on hearth_turns (session_id) where finished_at is null;
   create table if not exists hearth_turn_orders (
     id bigserial primary key,
     turn_key text not null references hearth_turns(key) on delete cascade,
     kind text not null,
     body jsonb not null default '{}',
     created_at timestamptz not null default now(),
     applied_at timestamptz
   );
   create index if not exists hearth_turn_orders_turn on hearth_turn_orders (turn_key, id);
   create or replace function hearth_turn_order() returns trigger language plpgsql as $$
   begin
     perform pg_notify('hearth_turn_orders', new.turn_key);
     return null;
   end $$;
   create trigger hearth_turn_order after insert on hearth_turn_orders
     for each row execute function hearth_turn_order();`,
  // 11: a pipeline task's claims are numbered: a claim is its owner and this number, and every move
  // of a claimed task is conditional on both (src/pipeline/plan-store.ts, Claim).
  `alter table hearth_pipeline_tasks add column epoch integer not null default 0;`,
  // 12: how fast a request's reply came (src/llm/speed.ts: JSON), and the assistant message it
  // made, for `hearth sessions show`.
  `alter table hearth_usage add column speed text, add column message_seq integer;`,
  // `hearth eval` (src/eval/): runs and one result per model, task and attempt, as in SQLite.
  `create table hearth_eval_runs (
     id text primary key,
     ord bigserial not null,
     status text not null,
     body text not null,
     created_at bigint not null,
     finished_at bigint
   );
   create table hearth_eval_results (
     id bigserial primary key,
     run_id text not null references hearth_eval_runs(id) on delete cascade,
     model text not null,
     task text not null,
     attempt integer not null,
     outcome text not null,
     session_id text,
     body text not null,
     created_at bigint not null,
     unique (run_id, model, task, attempt)
   );`,
  // Reflection reads a session again once it has new messages: the last message each reflection
  // read (src/memory/reflection/reflect.ts). Reflections from before read it all.
  `alter table hearth_reflections add column through_seq integer not null default 2147483647;`,
];

/** Any fixed number: every Hearth process migrating one database takes this lock first. */
const MIGRATION_LOCK = 0x4865_6172;

/**
 * Runs `work` (another library's migration, over other connections of `pool`) while this process
 * holds the lock Hearth's own migrations take, on a connection of its own; a lost connection
 * drops the lock with it. graphile-worker 0.16's `migrate()` is not safe to run from two
 * processes at once on a new database: both see no schema and both `create schema`, and the
 * second fails with a duplicate key in pg_namespace (graphile/worker#496, fixed only after
 * 0.16, the line we pin for Node 20). Under the lock the first installs it and the others find it done.
 */
export async function underMigrationLock<T>(pool: pg.Pool, work: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      return await work();
    } finally {
      await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}

/**
 * Applies the pending migrations in one transaction under an advisory lock: of several processes
 * opening a new database at once, the first does the work and the others find it done.
 */
export async function migratePostgres(pool: pg.Pool, migrations: readonly string[] = postgresMigrations) {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('create table if not exists hearth_schema (version integer not null)');
    const { rows } = await client.query<{ version: number }>('select version from hearth_schema');
    const current = rows[0]?.version ?? 0;
    if (current > migrations.length) {
      throw new Error(
        `The database was written by a newer Hearth (schema ${current}, this one knows ${migrations.length}). Upgrade Hearth.`,
      );
    }
    for (const sql of migrations.slice(current)) await client.query(sql);
    if (rows.length === 0)
      await client.query('insert into hearth_schema (version) values ($1)', [migrations.length]);
    else await client.query('update hearth_schema set version = $1', [migrations.length]);
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
