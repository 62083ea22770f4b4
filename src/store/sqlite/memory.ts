import type { ListOptions, MemoryStorage } from '../../memory/storage.js';
import type { Memory, MemoryView, NewMemory, VectorSpace } from '../../memory/types.js';
import { ftsQuery, type Ranked } from '../memory/keyword-search.js';
import {
  fileChanges,
  INSERT_COLUMNS,
  MEMORY_COLUMNS,
  type MemoryRow,
  newMemoryValues,
  normalizeText,
  type StoredVector,
  sameTextMaxLength,
  toMemory,
  vectorBytes,
  viewFilter,
} from '../memory/memory-rows.js';
import { InProcessVectorIndex, type VectorIndex } from '../memory/vector-index.js';
import type { Db } from './database.js';
import { SqliteProposals } from './proposals.js';
import { SqliteVecIndex } from './vec-index.js';

/** Parameters: model, dim, dim (dim may be null: not known yet). */
const STALE = '(embedding_model IS NULL OR embedding_model != ? OR (? IS NOT NULL AND embedding_dim != ?))';

/**
 * Memory in the session database: FTS5 (kept in sync by triggers) ranks text by BM25; vectors are
 * searched by sqlite-vec when it loads, else in process. Synchronous underneath (better-sqlite3).
 */
export class SqliteMemoryStorage implements MemoryStorage {
  readonly backend = 'sqlite';
  readonly proposals: SqliteProposals;

  private index: VectorIndex | undefined;

  private constructor(
    readonly db: Db,
    private readonly vectorChoice: 'auto' | 'in-process',
    private readonly now: () => number,
  ) {
    this.proposals = new SqliteProposals(db, (memory) => this.insertNow(memory), now);
  }

  /** 'auto': sqlite-vec when it loads, else vectors in process; 'in-process' skips it (the benchmark compares both). */
  static async open(
    db: Db,
    options: { vectors?: 'auto' | 'in-process'; now?: () => number } = {},
  ): Promise<SqliteMemoryStorage> {
    return new SqliteMemoryStorage(db, options.vectors ?? 'auto', options.now ?? Date.now);
  }

  /**
   * The vector index, set up when first needed: loading sqlite-vec (a native extension) is left to
   * the first vector search, so a session whose memory has nothing to search never pays for it.
   */
  private get vectors(): VectorIndex {
    this.index ??=
      (this.vectorChoice === 'auto' ? SqliteVecIndex.load(this.db).index : undefined) ??
      new InProcessVectorIndex(this.db);
    return this.index;
  }

  get vectorIndex(): VectorIndex['kind'] {
    return this.vectors.kind;
  }

  async insert(memory: NewMemory, vector?: StoredVector): Promise<Memory> {
    return this.insertNow(memory, vector);
  }

  private insertNow(memory: NewMemory, vector?: StoredVector): Memory {
    const info = this.db
      .prepare(`INSERT INTO memories (${INSERT_COLUMNS}) VALUES (${Array(13).fill('?').join(', ')})`)
      .run(...newMemoryValues(memory, this.now(), vector));
    return this.getNow(Number(info.lastInsertRowid))!;
  }

  private getNow(id: number): Memory | undefined {
    const row = this.db.prepare(`SELECT ${MEMORY_COLUMNS} FROM memories WHERE id = ?`).get(id) as
      | MemoryRow
      | undefined;
    return row && toMemory(row);
  }

  async get(id: number): Promise<Memory | undefined> {
    return this.getNow(id);
  }

  async byIds(ids: readonly number[]): Promise<Memory[]> {
    if (ids.length === 0) return [];
    const rows = this.db
      .prepare(`SELECT ${MEMORY_COLUMNS} FROM memories WHERE id IN (${ids.map(() => '?').join(',')})`)
      .all(...ids) as MemoryRow[];
    const byId = new Map(rows.map((row) => [row.id, toMemory(row)]));
    return ids.map((id) => byId.get(id)).filter((m): m is Memory => m !== undefined);
  }

  async list(view: MemoryView, options: ListOptions = {}): Promise<Memory[]> {
    const filter = viewFilter(view);
    const kinds = options.kinds?.length ? ` AND kind IN (${options.kinds.map(() => '?').join(',')})` : '';
    const scope =
      options.scope === undefined
        ? ''
        : ` AND workspace IS ${options.scope === 'user' ? 'NULL' : 'NOT NULL'}`;
    return (
      this.db
        .prepare(
          `SELECT ${MEMORY_COLUMNS} FROM memories WHERE ${filter.sql}${kinds}${scope} ORDER BY updated_at DESC, id DESC LIMIT ?`,
        )
        .all(...filter.params, ...(options.kinds ?? []), options.limit ?? -1) as MemoryRow[]
    ).map(toMemory);
  }

  async mostUsed(view: MemoryView, limit: number): Promise<Memory[]> {
    const filter = viewFilter(view);
    return (
      this.db
        .prepare(
          `SELECT ${MEMORY_COLUMNS} FROM memories WHERE ${filter.sql} ORDER BY use_count DESC, updated_at DESC LIMIT ?`,
        )
        .all(...filter.params, limit) as MemoryRow[]
    ).map(toMemory);
  }

  async sameText(view: MemoryView, text: string): Promise<Memory | undefined> {
    const wanted = normalizeText(text);
    const filter = viewFilter(view);
    // Memories are few and short: a length filter in SQL, the normalized compare in JS.
    const rows = this.db
      .prepare(`SELECT ${MEMORY_COLUMNS} FROM memories WHERE ${filter.sql} AND length(text) <= ?`)
      .all(...filter.params, sameTextMaxLength(wanted)) as MemoryRow[];
    const row = rows.find((r) => normalizeText(r.text) === wanted);
    return row && toMemory(row);
  }

  async updateText(id: number, text: string): Promise<void> {
    this.db
      .prepare(
        'UPDATE memories SET text = ?, updated_at = ?, embedding = NULL, embedding_model = NULL, embedding_dim = NULL WHERE id = ?',
      )
      .run(text, this.now(), id);
  }

  async delete(id: number): Promise<boolean> {
    return this.db.prepare('DELETE FROM memories WHERE id = ?').run(id).changes > 0;
  }

  async countUse(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    this.db
      .prepare(`UPDATE memories SET use_count = use_count + 1 WHERE id IN (${ids.map(() => '?').join(',')})`)
      .run(...ids);
  }

  async count(view: MemoryView): Promise<number> {
    const filter = viewFilter(view);
    return (
      this.db.prepare(`SELECT count(*) AS n FROM memories WHERE ${filter.sql}`).get(...filter.params) as {
        n: number;
      }
    ).n;
  }

  async unembedded(model: string, dim: number | undefined, limit: number) {
    return this.db
      .prepare(`SELECT id, text FROM memories WHERE ${STALE} ORDER BY use_count DESC, id DESC LIMIT ?`)
      .all(model, dim ?? null, dim ?? null, limit) as Array<{ id: number; text: string }>;
  }

  async countUnembedded(model: string, dim: number | undefined): Promise<number> {
    return (
      this.db
        .prepare(`SELECT count(*) AS n FROM memories WHERE ${STALE}`)
        .get(model, dim ?? null, dim ?? null) as { n: number }
    ).n;
  }

  async setEmbeddings(space: VectorSpace, items: Array<{ id: number; vector: Float32Array }>): Promise<void> {
    const update = this.db.prepare(
      'UPDATE memories SET embedding = ?, embedding_model = ?, embedding_dim = ? WHERE id = ?',
    );
    this.db.transaction(() => {
      for (const item of items) update.run(vectorBytes(item.vector), space.model, space.dim, item.id);
    })();
  }

  async keywordSearch(text: string, view: MemoryView, limit: number): Promise<Ranked[]> {
    const query = ftsQuery(text);
    if (!query) return [];
    const filter = viewFilter(view, 'm.workspace');
    const rows = this.db
      .prepare(
        `SELECT m.id AS id, bm25(memories_fts) AS rank FROM memories_fts
         JOIN memories m ON m.id = memories_fts.rowid
         WHERE memories_fts MATCH ? AND ${filter.sql}
         ORDER BY rank LIMIT ?`,
      )
      .all(query, ...filter.params, limit) as Array<{ id: number; rank: number }>;
    // FTS5's bm25() is lower-is-better (negative); flipped so every list reads "higher is better".
    return rows.map((row) => ({ id: row.id, score: -row.rank }));
  }

  async nearest(query: Float32Array, space: VectorSpace, view: MemoryView, limit: number): Promise<Ranked[]> {
    return this.vectors.search(query, space, view, limit);
  }

  async syncFile(path: string, entries: readonly string[]): Promise<void> {
    const kept = (
      this.db.prepare(`SELECT ${MEMORY_COLUMNS} FROM memories WHERE source_file = ?`).all(path) as MemoryRow[]
    ).map(toMemory);
    const change = fileChanges(kept, entries);
    if (change.remove.length === 0 && change.add.length === 0) return;
    this.db.transaction(() => {
      for (const id of change.remove) this.db.prepare('DELETE FROM memories WHERE id = ?').run(id);
      for (const text of change.add)
        this.insertNow({ kind: 'fact', workspace: null, text, origin: 'file', sourceFile: path });
    })();
  }

  async close(): Promise<void> {}
}
