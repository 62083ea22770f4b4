import type { Db } from '../store/database.js';
import type { Memory, MemoryView, NewMemory, VectorSpace } from './types.js';

interface MemoryRow {
  id: number;
  kind: Memory['kind'];
  workspace: string | null;
  text: string;
  detail: string | null;
  origin: Memory['origin'];
  source_file: string | null;
  session_id: string | null;
  message_seq: number | null;
  created_at: number;
  updated_at: number;
  use_count: number;
  embedding_model: string | null;
}

const COLUMNS =
  'id, kind, workspace, text, detail, origin, source_file, session_id, message_seq, created_at, updated_at, use_count, embedding_model';

function toMemory(row: MemoryRow): Memory {
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
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    useCount: row.use_count,
    embeddingModel: row.embedding_model,
  };
}

/** `WHERE` text and parameters for a view: a workspace's memories and the user-wide ones. */
export function viewFilter(view: MemoryView, column = 'workspace'): { sql: string; params: string[] } {
  return view === 'all'
    ? { sql: '1', params: [] }
    : { sql: `(${column} IS NULL OR ${column} = ?)`, params: [view.workspace] };
}

/** Float32 vectors as stored: the raw little-endian bytes. */
export function vectorBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function blobVector(blob: Buffer): Float32Array {
  // Copied: the Buffer may be a slice of a pool with an offset that is not 4-byte aligned.
  const copy = new Uint8Array(blob.byteLength);
  copy.set(blob);
  return new Float32Array(copy.buffer);
}

/** Parameters: model, dim, dim (dim may be null: not known yet). */
const STALE = '(embedding_model IS NULL OR embedding_model != ? OR (? IS NOT NULL AND embedding_dim != ?))';

/** The memories table: rows, embeddings and use counts. Search lives in keyword-search.ts and vectors/. */
export class MemoryStore {
  constructor(
    readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  insert(memory: NewMemory, vector?: { space: VectorSpace; vector: Float32Array }): Memory {
    const at = this.now();
    const info = this.db
      .prepare(
        `INSERT INTO memories (kind, workspace, text, detail, origin, source_file, session_id, message_seq,
           created_at, updated_at, embedding, embedding_model, embedding_dim)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
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
        vector ? vectorBlob(vector.vector) : null,
        vector?.space.model ?? null,
        vector?.space.dim ?? null,
      );
    return this.get(Number(info.lastInsertRowid))!;
  }

  get(id: number): Memory | undefined {
    const row = this.db.prepare(`SELECT ${COLUMNS} FROM memories WHERE id = ?`).get(id) as
      | MemoryRow
      | undefined;
    return row && toMemory(row);
  }

  /** The rows for these ids, in the order given (missing ones left out). */
  byIds(ids: readonly number[]): Memory[] {
    if (ids.length === 0) return [];
    const rows = this.db
      .prepare(`SELECT ${COLUMNS} FROM memories WHERE id IN (${ids.map(() => '?').join(',')})`)
      .all(...ids) as MemoryRow[];
    const byId = new Map(rows.map((row) => [row.id, toMemory(row)]));
    return ids.map((id) => byId.get(id)).filter((m): m is Memory => m !== undefined);
  }

  /** Newest first; `kinds` and `scope` (only the project's, or only the user-wide ones) narrow it. */
  list(
    view: MemoryView,
    options: { limit?: number; kinds?: readonly string[]; scope?: 'project' | 'user' } = {},
  ): Memory[] {
    const filter = viewFilter(view);
    const kinds = options.kinds?.length ? ` AND kind IN (${options.kinds.map(() => '?').join(',')})` : '';
    const scope =
      options.scope === undefined
        ? ''
        : ` AND workspace IS ${options.scope === 'user' ? 'NULL' : 'NOT NULL'}`;
    return (
      this.db
        .prepare(
          `SELECT ${COLUMNS} FROM memories WHERE ${filter.sql}${kinds}${scope} ORDER BY updated_at DESC, id DESC LIMIT ?`,
        )
        .all(...filter.params, ...(options.kinds ?? []), options.limit ?? -1) as MemoryRow[]
    ).map(toMemory);
  }

  /** The ones a new session most likely needs when its task says little: most used, then newest. */
  mostUsed(view: MemoryView, limit: number): Memory[] {
    const filter = viewFilter(view);
    return (
      this.db
        .prepare(
          `SELECT ${COLUMNS} FROM memories WHERE ${filter.sql} ORDER BY use_count DESC, updated_at DESC LIMIT ?`,
        )
        .all(...filter.params, limit) as MemoryRow[]
    ).map(toMemory);
  }

  /** The memories of a view whose normalized text is exactly this (duplicates). */
  sameText(view: MemoryView, text: string): Memory | undefined {
    const wanted = normalizeText(text);
    const filter = viewFilter(view);
    // Exact text first (indexed by nothing, but memories are few and short); the normalized compare is in JS.
    const rows = this.db
      .prepare(`SELECT ${COLUMNS} FROM memories WHERE ${filter.sql} AND length(text) BETWEEN ? AND ?`)
      .all(...filter.params, Math.floor(wanted.length / 2), wanted.length * 2 + 8) as MemoryRow[];
    const row = rows.find((r) => normalizeText(r.text) === wanted);
    return row && toMemory(row);
  }

  updateText(id: number, text: string): void {
    // The old vector no longer describes the text: cleared, it is embedded again on the next search.
    this.db
      .prepare(
        'UPDATE memories SET text = ?, updated_at = ?, embedding = NULL, embedding_model = NULL, embedding_dim = NULL WHERE id = ?',
      )
      .run(text, this.now(), id);
  }

  delete(id: number): boolean {
    return this.db.prepare('DELETE FROM memories WHERE id = ?').run(id).changes > 0;
  }

  countUse(ids: readonly number[]): void {
    if (ids.length === 0) return;
    this.db
      .prepare(`UPDATE memories SET use_count = use_count + 1 WHERE id IN (${ids.map(() => '?').join(',')})`)
      .run(...ids);
  }

  /**
   * Memories without a vector of this model (new, edited, or embedded by another model), most used
   * first: they are embedded again lazily. With the dimension known, vectors of another one count too.
   */
  unembedded(model: string, dim: number | undefined, limit: number): Array<{ id: number; text: string }> {
    return this.db
      .prepare(`SELECT id, text FROM memories WHERE ${STALE} ORDER BY use_count DESC, id DESC LIMIT ?`)
      .all(model, dim ?? null, dim ?? null, limit) as Array<{ id: number; text: string }>;
  }

  countUnembedded(model: string, dim: number | undefined): number {
    return (
      this.db
        .prepare(`SELECT count(*) AS n FROM memories WHERE ${STALE}`)
        .get(model, dim ?? null, dim ?? null) as {
        n: number;
      }
    ).n;
  }

  setEmbeddings(space: VectorSpace, items: Array<{ id: number; vector: Float32Array }>): void {
    const update = this.db.prepare(
      'UPDATE memories SET embedding = ?, embedding_model = ?, embedding_dim = ? WHERE id = ?',
    );
    this.db.transaction(() => {
      for (const item of items) update.run(vectorBlob(item.vector), space.model, space.dim, item.id);
    })();
  }

  /** Moves every time a memory is added, removed, re-embedded or moved: in-process indexes reload on it. */
  revision(): number {
    return memoryRevision(this.db);
  }

  /** Texts kept from a memory file, to bring them in line with the file. */
  fromFile(path: string): Memory[] {
    return (
      this.db.prepare(`SELECT ${COLUMNS} FROM memories WHERE source_file = ?`).all(path) as MemoryRow[]
    ).map(toMemory);
  }

  count(view: MemoryView): number {
    const filter = viewFilter(view);
    return (
      this.db.prepare(`SELECT count(*) AS n FROM memories WHERE ${filter.sql}`).get(...filter.params) as {
        n: number;
      }
    ).n;
  }
}

/** A counter the memory triggers move on every change that matters to a vector index. */
export function memoryRevision(db: Db): number {
  return (db.prepare('SELECT value FROM memory_revision WHERE id = 1').get() as { value: number }).value;
}

/** What counts as "the same text": case, spacing and trailing punctuation aside. */
export function normalizeText(text: string): string {
  return text
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[\s.!;,]+$/, '')
    .trim();
}
