import type { ListOptions, MemoryStorage } from '../../memory/storage.js';
import type { Memory, MemoryView, NewMemory, VectorSpace } from '../../memory/types.js';
import { type Ranked, websearchQuery } from '../memory/keyword-search.js';
import {
  bytesVector,
  fileChanges,
  MEMORY_COLUMNS,
  type MemoryRow,
  normalizeText,
  type StoredVector,
  sameTextMaxLength,
  toMemory,
  vectorBytes,
} from '../memory/memory-rows.js';
import { BestScores, dot } from '../memory/vector-index.js';
import { inTransaction, type PgPool } from './connection.js';
import { insertMemory, pgView, type Queryable } from './memory-queries.js';
import { PostgresProposals } from './proposals.js';

/** Vectors read per round trip when scanning for the nearest: memory stays bounded however many there are. */
const VECTOR_BATCH = 500;

export interface PostgresMemoryOptions {
  now?: () => number;
  /** Vectors per round trip of a nearest-neighbour scan (default VECTOR_BATCH). */
  vectorBatch?: number;
}

/** Parameters $1 model, $2 dim (null: not known yet). */
const STALE =
  '(embedding_model is null or embedding_model <> $1 or ($2::integer is not null and embedding_dim <> $2))';

/**
 * Memory in the PostgreSQL database several machines share (`storage: postgres://...`). Text is
 * ranked by PostgreSQL's own full-text search (ts_rank_cd over a generated tsvector column); the
 * user's words reach it through websearch_to_tsquery, which reads any text without a syntax error.
 * Vectors are stored as bytes and compared in this process, scanned in batches so memory stays
 * bounded: pgvector is not in Debian 12's packages this project installs from, and memories number
 * in the thousands, where a scan costs milliseconds.
 */
export class PostgresMemoryStorage implements MemoryStorage {
  readonly backend = 'postgres';
  readonly vectorIndex = 'in-process';
  readonly proposals: PostgresProposals;
  private readonly db: Queryable;

  constructor(
    private readonly pool: PgPool,
    private readonly options: PostgresMemoryOptions = {},
  ) {
    this.db = pool;
    this.proposals = new PostgresProposals(pool, this.now);
  }

  private readonly now = (): number => (this.options.now ?? Date.now)();

  insert(memory: NewMemory, vector?: StoredVector): Promise<Memory> {
    return insertMemory(this.db, memory, this.now(), vector);
  }

  async get(id: number): Promise<Memory | undefined> {
    const { rows } = await this.db.query<MemoryRow>(
      `select ${MEMORY_COLUMNS} from hearth_memories where id = $1`,
      [id],
    );
    return rows[0] && toMemory(rows[0]);
  }

  async byIds(ids: readonly number[]): Promise<Memory[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.db.query<MemoryRow>(
      `select ${MEMORY_COLUMNS} from hearth_memories where id = any($1::integer[])`,
      [ids],
    );
    const byId = new Map(rows.map((row) => [row.id, toMemory(row)]));
    return ids.map((id) => byId.get(id)).filter((m): m is Memory => m !== undefined);
  }

  async list(view: MemoryView, options: ListOptions = {}): Promise<Memory[]> {
    const params: unknown[] = [];
    let where = pgView(view, params);
    if (options.kinds?.length) {
      params.push(options.kinds);
      where += ` and kind = any($${params.length}::text[])`;
    }
    if (options.scope) where += ` and workspace is ${options.scope === 'user' ? 'null' : 'not null'}`;
    params.push(options.limit ?? null);
    const { rows } = await this.db.query<MemoryRow>(
      `select ${MEMORY_COLUMNS} from hearth_memories where ${where}
       order by updated_at desc, id desc limit $${params.length}`,
      params,
    );
    return rows.map(toMemory);
  }

  async mostUsed(view: MemoryView, limit: number): Promise<Memory[]> {
    const params: unknown[] = [];
    const where = pgView(view, params);
    params.push(limit);
    const { rows } = await this.db.query<MemoryRow>(
      `select ${MEMORY_COLUMNS} from hearth_memories where ${where}
       order by use_count desc, updated_at desc limit $${params.length}`,
      params,
    );
    return rows.map(toMemory);
  }

  async sameText(view: MemoryView, text: string): Promise<Memory | undefined> {
    const wanted = normalizeText(text);
    const params: unknown[] = [sameTextMaxLength(wanted)];
    const { rows } = await this.db.query<MemoryRow>(
      `select ${MEMORY_COLUMNS} from hearth_memories
       where length(text) <= $1 and ${pgView(view, params)}`,
      params,
    );
    const row = rows.find((r) => normalizeText(r.text) === wanted);
    return row && toMemory(row);
  }

  async updateText(id: number, text: string): Promise<void> {
    await this.db.query(
      `update hearth_memories set text = $1, updated_at = $2, embedding = null, embedding_model = null,
         embedding_dim = null where id = $3`,
      [text, this.now(), id],
    );
  }

  async delete(id: number): Promise<boolean> {
    return ((await this.db.query('delete from hearth_memories where id = $1', [id])).rowCount ?? 0) > 0;
  }

  async countUse(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query(
      'update hearth_memories set use_count = use_count + 1 where id = any($1::integer[])',
      [ids],
    );
  }

  async count(view: MemoryView): Promise<number> {
    const params: unknown[] = [];
    const { rows } = await this.db.query<{ n: number }>(
      `select count(*)::integer as n from hearth_memories where ${pgView(view, params)}`,
      params,
    );
    return rows[0]!.n;
  }

  async unembedded(model: string, dim: number | undefined, limit: number) {
    const { rows } = await this.db.query<{ id: number; text: string }>(
      `select id, text from hearth_memories where ${STALE} order by use_count desc, id desc limit $3`,
      [model, dim ?? null, limit],
    );
    return rows;
  }

  async countUnembedded(model: string, dim: number | undefined): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `select count(*)::integer as n from hearth_memories where ${STALE}`,
      [model, dim ?? null],
    );
    return rows[0]!.n;
  }

  async setEmbeddings(space: VectorSpace, items: Array<{ id: number; vector: Float32Array }>): Promise<void> {
    if (items.length === 0) return;
    await this.db.query(
      `update hearth_memories m set embedding = v.embedding, embedding_model = $3, embedding_dim = $4
       from unnest($1::integer[], $2::bytea[]) as v(id, embedding) where m.id = v.id`,
      [items.map((item) => item.id), items.map((item) => vectorBytes(item.vector)), space.model, space.dim],
    );
  }

  async keywordSearch(text: string, view: MemoryView, limit: number): Promise<Ranked[]> {
    const query = websearchQuery(text);
    if (!query) return [];
    const params: unknown[] = [query, limit];
    const { rows } = await this.db.query<{ id: number; rank: number }>(
      `select id, ts_rank_cd(text_search, q) as rank
       from hearth_memories, websearch_to_tsquery('english', $1) as q
       where text_search @@ q and ${pgView(view, params)}
       order by rank desc, id limit $2`,
      params,
    );
    return rows.map((row) => ({ id: row.id, score: row.rank }));
  }

  async nearest(query: Float32Array, space: VectorSpace, view: MemoryView, limit: number): Promise<Ranked[]> {
    if (query.length !== space.dim || limit <= 0) return [];
    const best = new BestScores(limit);
    let after = 0;
    for (;;) {
      const batch = this.options.vectorBatch ?? VECTOR_BATCH;
      const params: unknown[] = [space.model, space.dim, after, batch];
      const { rows } = await this.db.query<{ id: number; embedding: Buffer }>(
        `select id, embedding from hearth_memories
         where embedding_model = $1 and embedding_dim = $2 and id > $3 and ${pgView(view, params)}
         order by id limit $4`,
        params,
      );
      for (const row of rows) best.offer(row.id, dot(bytesVector(row.embedding), 0, query));
      if (rows.length < batch) return best.items;
      after = rows.at(-1)!.id;
    }
  }

  async syncFile(path: string, entries: readonly string[]): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      // Two machines reading the same file at once would otherwise both add its new entries.
      await client.query('select pg_advisory_xact_lock(hashtext($1))', [`hearth memory file ${path}`]);
      const { rows } = await client.query<MemoryRow>(
        `select ${MEMORY_COLUMNS} from hearth_memories where source_file = $1`,
        [path],
      );
      const change = fileChanges(rows.map(toMemory), entries);
      if (change.remove.length > 0)
        await client.query('delete from hearth_memories where id = any($1::integer[])', [change.remove]);
      for (const text of change.add)
        await insertMemory(
          client,
          { kind: 'fact', workspace: null, text, origin: 'file', sourceFile: path },
          this.now(),
        );
    });
  }

  /** The pool is the Storage's. */
  async close(): Promise<void> {}
}
