/**
 * The scheduler's records for `hearth storage migrate` (copy-from-sqlite.ts): the jobs' progress
 * and stored definitions, and every run, after the sessions. Idempotent: a job already in the
 * shared database keeps its own progress, a run is copied once (`copied_from` names the file and
 * its id there; the shared database numbers it anew), and a slot another machine recorded first
 * stays that machine's. Wake-ups belong to a session and go with it (copy-from-sqlite.ts).
 */
import { hostname } from 'node:os';
import type { Db } from '../../sqlite/database.js';
import type { PgPool } from '../connection.js';
import type { Copier } from './from-sqlite.js';

/** Rows per statement: a long history of every-minute slots goes over in parts. */
const BATCH = 2_000;

interface Column {
  name: string;
  type: string;
  /** SQLite keeps booleans as 0/1. */
  boolean?: boolean;
}

const JOB_COLUMNS: Column[] = [
  { name: 'id', type: 'text' },
  { name: 'definition', type: 'text' },
  { name: 'enabled_override', type: 'boolean', boolean: true },
  { name: 'anchor_at', type: 'bigint' },
  { name: 'cursor_at', type: 'bigint' },
  { name: 'created_at', type: 'bigint' },
];

const RUN_COLUMNS: Column[] = [
  { name: 'kind', type: 'text' },
  { name: 'job_id', type: 'text' },
  { name: 'slot_at', type: 'bigint' },
  { name: 'ref', type: 'text' },
  { name: 'status', type: 'text' },
  { name: 'reason', type: 'text' },
  { name: 'caught_up', type: 'boolean', boolean: true },
  { name: 'prompt', type: 'text' },
  { name: 'workspace', type: 'text' },
  { name: 'session_id', type: 'text' },
  { name: 'queue_key', type: 'text' },
  { name: 'worker', type: 'text' },
  { name: 'host', type: 'text' },
  { name: 'prompt_tokens', type: 'integer' },
  { name: 'completion_tokens', type: 'integer' },
  { name: 'owner', type: 'text' },
  { name: 'lease_until', type: 'bigint' },
  { name: 'created_at', type: 'bigint' },
  { name: 'started_at', type: 'bigint' },
  { name: 'ended_at', type: 'bigint' },
  { name: 'copied_from', type: 'text' },
];

/** Inserts `rows` in batches, skipping any that clash with a row there; returns how many went in. */
async function insertAll(
  target: PgPool,
  table: string,
  columns: Column[],
  rows: Array<Record<string, unknown>>,
): Promise<number> {
  let inserted = 0;
  for (let i = 0; i < rows.length; i += BATCH) {
    const batch = rows.slice(i, i + BATCH);
    const arrays = columns.map((c) =>
      batch.map((row) => {
        const value = row[c.name] ?? null;
        return c.boolean && value !== null ? value === 1 : value;
      }),
    );
    const { rowCount } = await target.query(
      `INSERT INTO ${table} (${columns.map((c) => c.name).join(', ')})
         SELECT * FROM unnest(${columns.map((c, n) => `$${n + 1}::${c.type}[]`).join(', ')})
       ON CONFLICT DO NOTHING`,
      arrays,
    );
    inserted += rowCount ?? 0;
  }
  return inserted;
}

export const schedulerCopiers: Copier[] = [
  {
    name: 'jobs',
    rest: (source: Db, target: PgPool) =>
      insertAll(
        target,
        'hearth_scheduler_jobs',
        JOB_COLUMNS,
        source
          .prepare(
            `SELECT ${JOB_COLUMNS.map((c) => c.name).join(', ')} FROM scheduler_jobs ORDER BY created_at, id`,
          )
          .all() as Array<Record<string, unknown>>,
      ),
  },
  {
    name: 'job runs',
    rest: (source: Db, target: PgPool) => {
      const origin = `${hostname()}:${source.name}#`;
      const rows = source
        .prepare(
          `SELECT ${RUN_COLUMNS.filter((c) => c.name !== 'copied_from')
            .map((c) => c.name)
            .join(', ')}, ? || id AS copied_from FROM scheduler_runs ORDER BY id`,
        )
        .all(origin) as Array<Record<string, unknown>>;
      return insertAll(target, 'hearth_scheduler_runs', RUN_COLUMNS, rows);
    },
  },
];
