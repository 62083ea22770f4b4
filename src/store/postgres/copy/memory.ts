/**
 * The memory part of `hearth storage migrate --to postgres://...`: copies long-term memory from the
 * SQLite session database into PostgreSQL, keeping ids (so proposals still point at their memories,
 * and what a user noted as "#12" stays #12). Idempotent: a row whose id is there already is left
 * as it is, so a copy that was interrupted, or run twice, ends with each row once.
 */
import type { Db } from '../../sqlite/database.js';
import { inTransaction, type PgClient, type PgPool } from '../connection.js';

export interface CopiedTable {
  table: string;
  /** Rows written now. */
  copied: number;
  /** Rows whose key was in PostgreSQL already (an earlier copy, or a clash), left as they were. */
  skipped: number;
}

/** Rows per statement: one JSON parameter each, so a large memory costs few round trips. */
const BATCH = 500;

interface Table {
  sqlite: string;
  postgres: string;
  key: string;
  /** Column names and PostgreSQL types, as jsonb_to_recordset reads them. */
  columns: Array<[string, string]>;
}

const MEMORIES: Table = {
  sqlite: 'memories',
  postgres: 'hearth_memories',
  key: 'id',
  columns: [
    ['id', 'integer'],
    ['kind', 'text'],
    ['workspace', 'text'],
    ['text', 'text'],
    ['detail', 'text'],
    ['origin', 'text'],
    ['source_file', 'text'],
    ['session_id', 'text'],
    ['message_seq', 'integer'],
    ['created_at', 'bigint'],
    ['updated_at', 'bigint'],
    ['use_count', 'integer'],
    ['embedding', 'bytea'],
    ['embedding_model', 'text'],
    ['embedding_dim', 'integer'],
  ],
};

const PROPOSALS: Table = {
  sqlite: 'memory_proposals',
  postgres: 'hearth_memory_proposals',
  key: 'id',
  columns: [
    ['id', 'integer'],
    ['kind', 'text'],
    ['workspace', 'text'],
    ['text', 'text'],
    ['detail', 'text'],
    ['session_id', 'text'],
    ['message_seq', 'integer'],
    ['status', 'text'],
    ['memory_id', 'integer'],
    ['created_at', 'bigint'],
    ['decided_at', 'bigint'],
  ],
};

const REFLECTIONS: Table = {
  sqlite: 'reflections',
  postgres: 'hearth_reflections',
  key: 'session_id',
  columns: [
    ['session_id', 'text'],
    ['model', 'text'],
    ['proposals', 'integer'],
    ['created_at', 'bigint'],
    ['through_seq', 'integer'],
  ],
};

/**
 * Copies memories, then proposals (which point at them), then the record of reflected sessions, in
 * one PostgreSQL transaction; then moves the id sequences past the copied ids, so that new rows
 * do not collide with them. `to` must have Hearth's schema (openPostgres migrates it).
 */
export async function copyMemoryToPostgres(from: Db, to: PgPool): Promise<CopiedTable[]> {
  return inTransaction(to, async (client) => {
    const report: CopiedTable[] = [];
    for (const table of [MEMORIES, PROPOSALS, REFLECTIONS]) report.push(await copyTable(from, client, table));
    for (const table of [MEMORIES, PROPOSALS]) {
      await client.query(
        `select setval(pg_get_serial_sequence('${table.postgres}', 'id'), coalesce(max(id), 0) + 1, false)
         from ${table.postgres}`,
      );
    }
    return report;
  });
}

/**
 * The copier `hearth storage migrate` runs after the sessions (the shape of its list of copiers):
 * memories belong to no one session, so all of them at once; the rows copied.
 */
export const memoryCopier = {
  name: 'memories',
  async rest(source: Db, target: PgPool): Promise<number> {
    const report = await copyMemoryToPostgres(source, target);
    return report.reduce((n, table) => n + table.copied, 0);
  },
};

async function copyTable(from: Db, client: PgClient, table: Table): Promise<CopiedTable> {
  const names = table.columns.map(([name]) => name);
  const select = from.prepare(
    `SELECT ${names.join(', ')} FROM ${table.sqlite} WHERE ${table.key} > ? ORDER BY ${table.key} LIMIT ${BATCH}`,
  );
  const values = table.columns
    .map(([name, type]) => (type === 'bytea' ? `decode(r.${name}, 'hex')` : `r.${name}`))
    .join(', ');
  // Bytes travel as hex text inside the JSON.
  const record = table.columns
    .map(([name, type]) => `${name} ${type === 'bytea' ? 'text' : type}`)
    .join(', ');
  const insert = `insert into ${table.postgres} (${names.join(', ')})
    select ${values} from jsonb_to_recordset($1::jsonb) as r(${record})
    on conflict (${table.key}) do nothing`;
  let after: number | string = table.key === 'id' ? 0 : '';
  const counts = { copied: 0, skipped: 0 };
  for (;;) {
    const rows = select.all(after) as Array<Record<string, unknown>>;
    if (rows.length === 0) break;
    const json = rows.map((row) =>
      Object.fromEntries(Object.entries(row).map(([name, value]) => [name, jsonValue(value)])),
    );
    const { rowCount } = await client.query(insert, [JSON.stringify(json)]);
    counts.copied += rowCount ?? 0;
    counts.skipped += rows.length - (rowCount ?? 0);
    after = rows.at(-1)![table.key] as number | string;
  }
  return { table: table.postgres, ...counts };
}

/** Bytes as hex text; text without NUL, which PostgreSQL's text (and jsonb) cannot hold. */
function jsonValue(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return value.toString('hex');
  return typeof value === 'string' ? value.replaceAll('\0', '') : value;
}
