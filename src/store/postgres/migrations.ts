/**
 * Hearth's own tables in PostgreSQL, as an append-only list like the SQLite one
 * (src/store/migrations.ts): entry N brings the schema from version N to N+1. Never edit an entry
 * that has shipped; append a new one.
 */
import type pg from 'pg';

export const postgresMigrations: readonly string[] = [
  // 1: the work queue's tables beside graphile-worker's schema (src/cluster/work-queue.ts).
  `create table if not exists hearth_tasks (
     key text primary key,
     task text not null,
     workspace text not null,
     model text,
     tags text[] not null default '{}',
     queued_at timestamptz not null default now()
   );
   create table if not exists hearth_workers (
     id text primary key,
     host text not null,
     tags text[] not null default '{}',
     graphile_ids text[] not null default '{}',
     lease_until timestamptz not null,
     started_at timestamptz not null default now()
   );
   create table if not exists hearth_task_claims (
     key text not null,
     worker text not null,
     claimed_at timestamptz not null default now()
   );
   create index if not exists hearth_task_claims_key on hearth_task_claims (key);
   create table if not exists hearth_task_results (
     key text primary key,
     status text not null,
     reason text,
     session_id text,
     worker text not null,
     host text not null,
     prompt_tokens integer not null default 0,
     completion_tokens integer not null default 0,
     finished_at timestamptz not null default now()
   );`,
  // 2: a result wakes whoever waits for it (the scheduler, for the jobs it handed to workers).
  `create or replace function hearth_task_done() returns trigger language plpgsql as $$
   begin
     perform pg_notify('hearth_task_done', new.key);
     return null;
   end $$;
   create trigger hearth_task_done after insert on hearth_task_results
     for each row execute function hearth_task_done();`,
  // 3: the event log (src/store/postgres/event-log.ts): a head row per session numbers its events
  // (locked by the append that moves it), and (session_id, seq) is unique whatever happens; `batch`
  // names the append that wrote a row, so one retried after a lost reply is not written twice.
  `create table if not exists hearth_event_heads (
     session_id text primary key,
     last_seq integer not null,
     writer text not null,
     updated_at timestamptz not null default now()
   );
   create table if not exists hearth_events (
     session_id text not null,
     seq integer not null,
     type text not null,
     body text not null,
     created_at bigint not null,
     batch text not null,
     primary key (session_id, seq)
   );
   create index if not exists hearth_events_activity on hearth_events (created_at)
     where type in ('tool_call', 'tool_result');`,
];

/** Any fixed number: every Hearth process migrating one database takes this lock first. */
const MIGRATION_LOCK = 0x4865_6172;

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
