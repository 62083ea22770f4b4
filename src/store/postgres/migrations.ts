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
  // 2: sessions and everything kept with them (src/store/postgres/sessions.ts), as in SQLite.
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
