import type { Db } from '../sqlite/database.js';
import type { Ranked } from './keyword-search.js';
import { bytesVector, type MemoryView, type VectorSpace } from './memory-rows.js';

/**
 * Nearest memories to a query vector in the SQLite database, among those embedded in the query's
 * space (model and dimension); memories of other spaces are never compared. Scores are cosine
 * similarities (the stored vectors and the query are unit length).
 */
export interface VectorIndex {
  readonly kind: 'sqlite-vec' | 'in-process';
  search(query: Float32Array, space: VectorSpace, view: MemoryView, limit: number): Ranked[];
}

interface Loaded {
  space: VectorSpace;
  revision: number;
  ids: number[];
  workspaces: Array<string | null>;
  /** Row i is ids[i]'s vector: one flat array, so the scan stays in one tight loop. */
  matrix: Float32Array;
}

/**
 * Cosine over the stored Float32 vectors in this process: what search uses when the sqlite-vec
 * extension does not load. The vectors are read once and kept until the memory revision moves
 * (any process adding, removing or re-embedding a memory moves it).
 */
export class InProcessVectorIndex implements VectorIndex {
  readonly kind = 'in-process';
  private loaded: Loaded | undefined;

  constructor(private readonly db: Db) {}

  search(query: Float32Array, space: VectorSpace, view: MemoryView, limit: number): Ranked[] {
    const data = this.load(space);
    const { dim } = space;
    if (query.length !== dim) return [];
    const best = new BestScores(limit);
    for (let row = 0; row < data.ids.length; row++) {
      if (view !== 'all') {
        const ws = data.workspaces[row];
        if (ws !== null && ws !== view.workspace) continue;
      }
      best.offer(data.ids[row]!, dot(data.matrix, row * dim, query));
    }
    return best.items;
  }

  private load(space: VectorSpace): Loaded {
    const revision = memoryRevision(this.db);
    const current = this.loaded;
    if (current && current.revision === revision && sameSpace(current.space, space)) return current;
    const rows = this.db
      .prepare(
        'SELECT id, workspace, embedding FROM memories WHERE embedding_model = ? AND embedding_dim = ?',
      )
      .all(space.model, space.dim) as Array<{ id: number; workspace: string | null; embedding: Buffer }>;
    const matrix = new Float32Array(rows.length * space.dim);
    rows.forEach((row, i) => {
      matrix.set(bytesVector(row.embedding), i * space.dim);
    });
    this.loaded = {
      space,
      revision,
      ids: rows.map((row) => row.id),
      workspaces: rows.map((row) => row.workspace),
      matrix,
    };
    return this.loaded;
  }
}

/** A counter the memory triggers move on every change that matters to a vector index. */
function memoryRevision(db: Db): number {
  return (db.prepare('SELECT value FROM memory_revision WHERE id = 1').get() as { value: number }).value;
}

export function sameSpace(a: VectorSpace, b: VectorSpace): boolean {
  return a.model === b.model && a.dim === b.dim;
}

/** The dot product of `query` with the vector at `offset` in `vectors` (cosine, for unit vectors). */
export function dot(vectors: Float32Array, offset: number, query: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < query.length; i++) sum += vectors[offset + i]! * query[i]!;
  return sum;
}

/** The `limit` best-scored ids seen so far, best first. */
export class BestScores {
  readonly items: Ranked[] = [];

  constructor(private readonly limit: number) {}

  offer(id: number, score: number): void {
    const list = this.items;
    if (this.limit <= 0 || (list.length >= this.limit && score <= list[list.length - 1]!.score)) return;
    let at = list.length;
    while (at > 0 && list[at - 1]!.score < score) at--;
    list.splice(at, 0, { id, score });
    if (list.length > this.limit) list.pop();
  }
}
