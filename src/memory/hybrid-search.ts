import { EMBED_BATCH, type EmbeddingClient } from '../llm/embeddings.js';
import type { Ranked } from '../store/memory/keyword-search.js';
import { reciprocalRankFusion } from './fusion.js';
import type { MemoryStorage } from './storage.js';
import type { Memory, MemoryView, VectorSpace } from './types.js';

export interface Hit {
  memory: Memory;
  /** The fused score: higher is better, comparable within one search only. */
  score: number;
}

export interface SearchResult {
  hits: Hit[];
  /** Set when only keywords were searched, with the reason (no embeddings model, a failed request). */
  keywordOnly?: string;
}

/** The three rankings of one query, for the benchmark and for duplicate checks. */
export interface Rankings {
  keyword: Ranked[];
  vector: Ranked[];
  fused: Ranked[];
  /** The query's vector, when there was an embeddings model. */
  queryVector?: Float32Array;
  space?: VectorSpace;
  keywordOnly?: string;
}

/**
 * Memories embedded again per search after a change of embeddings model, so that the change costs
 * no long pause; with the query they fill one request of the embeddings client's batch size.
 */
export const REEMBED_PER_SEARCH = EMBED_BATCH - 1;
/** Each list contributes this many candidates per result wanted, before fusion. */
const CANDIDATES_PER_RESULT = 4;
/** After a failed embeddings request, keywords only for this long rather than waiting on the server each time. */
const EMBED_RETRY_MS = 60_000;

/**
 * Hybrid memory search: full-text ranking (BM25 over FTS5 in SQLite, ts_rank_cd in PostgreSQL) and
 * nearest vectors, merged by Reciprocal Rank Fusion
 * (fusion.ts). The query and any memories not yet embedded by the current model go to the server
 * in one request, so a change of model re-embeds lazily, a batch per search.
 */
export class HybridSearch {
  private space: VectorSpace | undefined;
  private embedFailed: { at: number; error: string } | undefined;

  constructor(
    private readonly store: MemoryStorage,
    private readonly embedder: EmbeddingClient | undefined,
    /** Why there is no embedder, said with keyword-only results. */
    private readonly noEmbedder = 'no embeddings model on the server',
    private readonly now: () => number = Date.now,
  ) {}

  async search(query: string, view: MemoryView, k: number, signal?: AbortSignal): Promise<SearchResult> {
    const ranked = await this.rank(query, view, k, signal);
    const top = ranked.fused.slice(0, k);
    const byId = new Map((await this.store.byIds(top.map((r) => r.id))).map((m) => [m.id, m]));
    const hits = top.flatMap((r) => {
      const memory = byId.get(r.id);
      return memory ? [{ memory, score: r.score }] : [];
    });
    return { hits, ...(ranked.keywordOnly ? { keywordOnly: ranked.keywordOnly } : {}) };
  }

  async rank(query: string, view: MemoryView, k: number, signal?: AbortSignal): Promise<Rankings> {
    const limit = Math.max(k * CANDIDATES_PER_RESULT, 20);
    const keyword = await this.store.keywordSearch(query, view, limit);
    const embedded = await this.embedQuery(query, signal);
    if (!embedded.ok) return { keyword, vector: [], fused: keyword, keywordOnly: embedded.error };
    const vector = await this.store.nearest(embedded.vector, embedded.space, view, limit);
    return {
      keyword,
      vector,
      fused: reciprocalRankFusion([keyword, vector]),
      queryVector: embedded.vector,
      space: embedded.space,
    };
  }

  /** Embeds one text (a memory about to be stored); undefined without a working embedder. */
  async embedOne(
    text: string,
    signal?: AbortSignal,
  ): Promise<{ vector: Float32Array; space: VectorSpace } | undefined> {
    const result = await this.embedQuery(text, signal);
    return result.ok ? { vector: result.vector, space: result.space } : undefined;
  }

  /** False when search is keyword-only for want of an embeddings model (not for a failed request). */
  get hasEmbedder(): boolean {
    return this.embedder !== undefined;
  }

  /** The space vectors are searched in, once the first request has told its dimension. */
  get currentSpace(): VectorSpace | undefined {
    return this.space;
  }

  private async embedQuery(
    query: string,
    signal?: AbortSignal,
  ): Promise<{ ok: true; vector: Float32Array; space: VectorSpace } | { ok: false; error: string }> {
    if (!this.embedder) return { ok: false, error: this.noEmbedder };
    if (this.embedFailed && this.now() - this.embedFailed.at < EMBED_RETRY_MS) {
      return { ok: false, error: this.embedFailed.error };
    }
    const model = this.embedder.model;
    const stale = await this.store.unembedded(model, this.space?.dim, REEMBED_PER_SEARCH);
    const result = await this.embedder.embed([query, ...stale.map((m) => m.text)], signal);
    if (!result.ok) {
      this.embedFailed = { at: this.now(), error: result.error };
      return { ok: false, error: result.error };
    }
    this.embedFailed = undefined;
    const [vector, ...rest] = result.vectors;
    const space = { model, dim: vector!.length };
    this.space = space;
    await this.store.setEmbeddings(
      space,
      stale.map((m, i) => ({ id: m.id, vector: rest[i]! })),
    );
    return { ok: true, vector: vector!, space };
  }
}
