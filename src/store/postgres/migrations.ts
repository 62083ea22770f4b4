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
