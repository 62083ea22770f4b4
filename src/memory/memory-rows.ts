/** Rows of the memories table as both backends read them back. */
import { normalizeText, type StoredVector, vectorBytes } from './storage.js';
import type { Memory, MemoryView, NewMemory } from './types.js';

export interface MemoryRow {
  id: number;
  kind: Memory['kind'];
  workspace: string | null;
  text: string;
  detail: string | null;
  origin: Memory['origin'];
  source_file: string | null;
  session_id: string | null;
  message_seq: number | null;
  created_at: number | string;
  updated_at: number | string;
  use_count: number;
  embedding_model: string | null;
}

/** The columns both backends read back as a Memory (PostgreSQL's bigint times come as strings). */
export const MEMORY_COLUMNS =
  'id, kind, workspace, text, detail, origin, source_file, session_id, message_seq, created_at, updated_at, use_count, embedding_model';

export function toMemory(row: MemoryRow): Memory {
  return {
    id: row.id,
    kind: row.kind,
    workspace: row.workspace,
    text: row.text,
    detail: row.detail,
    origin: row.origin,
    sourceFile: row.source_file,
    sessionId: row.session_id,
    messageSeq: row.message_seq,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    useCount: row.use_count,
    embeddingModel: row.embedding_model,
  };
}

/** What to remove and add so that the memories kept from a file are its entries. */
export function fileChanges(
  kept: readonly Memory[],
  entries: readonly string[],
): { remove: number[]; add: string[] } {
  const wanted = new Set(entries.map(normalizeText));
  const have = new Set(kept.map((m) => normalizeText(m.text)));
  return {
    remove: kept.filter((m) => !wanted.has(normalizeText(m.text))).map((m) => m.id),
    add: entries.filter((text) => !have.has(normalizeText(text))),
  };
}

/** SQLite `WHERE` text and parameters for a view: a workspace's memories and the user-wide ones. */
export function viewFilter(view: MemoryView, column = 'workspace'): { sql: string; params: string[] } {
  return view === 'all'
    ? { sql: '1', params: [] }
    : { sql: `(${column} IS NULL OR ${column} = ?)`, params: [view.workspace] };
}

/** The columns a new memory is inserted with, in the order of `newMemoryValues`. */
export const INSERT_COLUMNS =
  'kind, workspace, text, detail, origin, source_file, session_id, message_seq, created_at, updated_at, embedding, embedding_model, embedding_dim';

/** A new memory's values for INSERT_COLUMNS: created and updated at `at`. */
export function newMemoryValues(memory: NewMemory, at: number, vector?: StoredVector): unknown[] {
  return [
    memory.kind,
    memory.workspace,
    memory.text,
    memory.detail ?? null,
    memory.origin,
    memory.sourceFile ?? null,
    memory.sessionId ?? null,
    memory.messageSeq ?? null,
    at,
    at,
    vector ? vectorBytes(vector.vector) : null,
    vector?.space.model ?? null,
    vector?.space.dim ?? null,
  ];
}
