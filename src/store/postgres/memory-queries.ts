import type { Memory, MemoryView, NewMemory } from '../../memory/types.js';
import {
  INSERT_COLUMNS,
  MEMORY_COLUMNS,
  type MemoryRow,
  newMemoryValues,
  type StoredVector,
  toMemory,
} from '../memory/memory-rows.js';

/** What runs a query: the pool, or one client inside a transaction. */
export interface Queryable {
  query<R extends object = Record<string, unknown>>(
    sql: string,
    params?: unknown[],
  ): Promise<{ rows: R[]; rowCount: number | null }>;
}

/** The SQL of a view, its workspace appended to `params` as the next placeholder. */
export function pgView(view: MemoryView, params: unknown[], column = 'workspace'): string {
  if (view === 'all') return 'true';
  params.push(view.workspace);
  return `(${column} is null or ${column} = $${params.length})`;
}

/** Inserts one memory through `db` (inside a caller's transaction when it is a client). */
export async function insertMemory(
  db: Queryable,
  memory: NewMemory,
  at: number,
  vector?: StoredVector,
): Promise<Memory> {
  const { rows } = await db.query<MemoryRow>(
    `insert into hearth_memories (${INSERT_COLUMNS})
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) returning ${MEMORY_COLUMNS}`,
    newMemoryValues(memory, at, vector),
  );
  return toMemory(rows[0]!);
}
