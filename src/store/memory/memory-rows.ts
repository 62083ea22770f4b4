/** Rows of the memories table as both backends read them back. */
import type { Memory, NewMemory } from '../../memory/types.js';

/** Which memories a query sees: one workspace's and the user-wide ones, or every one. */
export type MemoryView = { workspace: string } | 'all';

/** Vectors of one model and dimension: only these are ever compared with each other. */
export interface VectorSpace {
  model: string;
  dim: number;
}

export interface StoredVector {
  space: VectorSpace;
  vector: Float32Array;
}

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

/** What counts as "the same text": case, spacing, control characters and trailing punctuation aside. */
export function normalizeText(text: string): string {
  return text
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/\p{Cc}/gu, '')
    .replace(/[\s.!;,]+$/, '')
    .trim();
}

/**
 * The longest stored text worth comparing with `wanted` for sameness: a cheap filter in SQL. Only
 * an upper bound, as SQLite's length() stops at a NUL.
 */
export function sameTextMaxLength(wanted: string): number {
  return wanted.length * 2 + 8;
}

/** Float32 vectors as both backends store them: the raw little-endian bytes. */
export function vectorBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function bytesVector(bytes: Buffer): Float32Array {
  // Copied: the Buffer may be a slice of a pool with an offset that is not 4-byte aligned.
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}

/** The whole session: a reflection recorded without a span, and the ones from before spans were kept. */
export const WHOLE_SESSION = { through: 2_147_483_647 } as const;
