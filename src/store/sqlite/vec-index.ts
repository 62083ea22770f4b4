import { createRequire } from 'node:module';
import type { Ranked } from '../memory/keyword-search.js';
import type { MemoryView, VectorSpace } from '../memory/memory-rows.js';
import { sameSpace, type VectorIndex } from '../memory/vector-index.js';
import type { Db } from './database.js';

/**
 * Vector search inside SQLite with the sqlite-vec extension (an optional dependency whose binary
 * ships in its npm package). The vec0 table `memory_vec` is an index over the memories' stored
 * vectors for one space at a time, recorded in memory_vec_meta: a change of embeddings model drops
 * and rebuilds it, so dimensions never mix. Triggers queue every changed memory in
 * memory_vec_pending (they cannot write vec0 themselves: a process without the extension could
 * then not write memories at all); each search first applies the queue.
 */
export class SqliteVecIndex implements VectorIndex {
  readonly kind = 'sqlite-vec';

  private constructor(private readonly db: Db) {}

  /**
   * Loads the extension into this connection; undefined, with the reason, when it cannot (not
   * installed, no binary for this platform, or SQLite refusing extensions). Search then runs in process.
   */
  static load(db: Db): { index?: SqliteVecIndex; reason?: string } {
    try {
      // A variable specifier: the package is optional, and the build must not need it. Required,
      // not imported: its CommonJS build loads without starting Node's ES-module loader, which a
      // first session would otherwise pay for before its first request (`npm run bench`).
      const specifier = 'sqlite-vec';
      const vec = createRequire(import.meta.url)(specifier) as { load(db: Db): void };
      vec.load(db);
      db.prepare('SELECT vec_version()').get();
      return { index: new SqliteVecIndex(db) };
    } catch (err) {
      return { reason: `sqlite-vec did not load (${(err as Error).message.split('\n')[0]})` };
    }
  }

  search(query: Float32Array, space: VectorSpace, view: MemoryView, limit: number): Ranked[] {
    if (query.length !== space.dim || limit <= 0) return [];
    this.catchUp(space);
    const filter = view === 'all' ? '' : ` AND workspace IN ('', ?)`;
    const rows = this.db
      .prepare(
        `SELECT rowid AS id, distance FROM memory_vec WHERE embedding MATCH ? AND k = ?${filter} ORDER BY distance`,
      )
      .all(query, Math.min(limit, 4096), ...(view === 'all' ? [] : [view.workspace])) as Array<{
      id: number;
      distance: number;
    }>;
    return rows.map((row) => ({ id: Number(row.id), score: 1 - row.distance }));
  }

  /** Brings memory_vec in line with the memories: rebuilt for a new space, else the queued changes. */
  private catchUp(space: VectorSpace): void {
    const meta = this.db.prepare('SELECT model, dim FROM memory_vec_meta WHERE id = 1').get() as
      | VectorSpace
      | undefined;
    const exists =
      this.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'memory_vec'").get() !== undefined;
    if (exists && meta && sameSpace(meta, space)) {
      const waiting = this.db.prepare('SELECT 1 FROM memory_vec_pending LIMIT 1').get();
      if (waiting) this.db.transaction(() => this.applyPending(space)).immediate();
      return;
    }
    this.db.transaction(() => this.rebuild(space)).immediate();
  }

  private rebuild(space: VectorSpace): void {
    this.db.exec('DROP TABLE IF EXISTS memory_vec');
    this.db.exec(
      `CREATE VIRTUAL TABLE memory_vec USING vec0(embedding float[${space.dim}] distance_metric=cosine, workspace text)`,
    );
    this.db
      .prepare(
        `INSERT INTO memory_vec(rowid, embedding, workspace)
         SELECT id, embedding, coalesce(workspace, '') FROM memories WHERE embedding_model = ? AND embedding_dim = ?`,
      )
      .run(space.model, space.dim);
    this.db
      .prepare('INSERT OR REPLACE INTO memory_vec_meta (id, model, dim) VALUES (1, ?, ?)')
      .run(space.model, space.dim);
    this.db.exec('DELETE FROM memory_vec_pending');
  }

  private applyPending(space: VectorSpace): void {
    const ids = (
      this.db.prepare('SELECT memory_id FROM memory_vec_pending').all() as Array<{ memory_id: number }>
    ).map((row) => row.memory_id);
    const remove = this.db.prepare('DELETE FROM memory_vec WHERE rowid = ?');
    const add = this.db.prepare(
      `INSERT INTO memory_vec(rowid, embedding, workspace)
       SELECT id, embedding, coalesce(workspace, '') FROM memories WHERE id = ? AND embedding_model = ? AND embedding_dim = ?`,
    );
    for (const id of ids) {
      // vec0 takes only integer rowids, and better-sqlite3 binds a JS number as a float: BigInt it is.
      remove.run(BigInt(id));
      add.run(id, space.model, space.dim);
    }
    this.db.exec('DELETE FROM memory_vec_pending');
  }
}
