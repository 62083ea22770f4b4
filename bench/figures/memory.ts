import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configSchema } from '../../src/config/schema.js';
import { createEmbeddingClient } from '../../src/llm/embeddings.js';
import type { LongTermMemory } from '../../src/memory/memory.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteMemoryStorage } from '../../src/store/sqlite/memory.js';
import { startScriptedServer } from '../../test/support/scripted-server.js';
import { type Corpus, makeCorpus, standInEmbedder } from '../memory-corpus.js';
import type { Row } from '../stats.js';

const MEMORIES = Number(process.env.MEMORY_BENCH_SIZE) || 10_000;
const QUERIES_PER_KIND = 100;
const DIMS = 384;
const K = 5;
const MODEL = 'stand-in-embed';

type Method = 'hybrid' | 'bm25' | 'vectors';

/**
 * Retrieval over a generated corpus (bench/memory-corpus.ts): recall@5 of hybrid search, BM25 alone
 * and vectors alone on 200 queries, half needing an exact token and half a paraphrase; and the p95
 * time of a whole query (embedding it over HTTP, BM25, vectors, fusion) with sqlite-vec and with
 * cosine in process. Hybrid must beat both single methods: the figure fails otherwise.
 */
export async function memoryFigures(): Promise<{ rows: Row[]; json: Record<string, unknown> }> {
  const corpus = makeCorpus(MEMORIES, QUERIES_PER_KIND);
  const embed = standInEmbedder(corpus.concepts, DIMS);
  const server = await startScriptedServer({
    models: [MODEL],
    extraRoutes: {
      'POST /v1/embeddings': (_req, body) => {
        const input = (body as { input: string | string[] }).input;
        const texts = Array.isArray(input) ? input : [input];
        return {
          json: {
            object: 'list',
            data: texts.map((t, index) => ({ object: 'embedding', index, embedding: embed(t) })),
          },
        };
      },
    },
  });
  const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-memory-'));
  const db = openDatabase(join(dir, 'hearth.db'));
  try {
    const open = async (vectors: 'auto' | 'in-process') =>
      openMemory({
        storage: await SqliteMemoryStorage.open(db, { vectors }),
        config: configSchema.parse({ memory: { embedding_model: MODEL } }),
        workspace: dir,
        home: join(dir, 'home'),
        server: { baseUrl: server.baseUrl },
      });
    const withVec = await open('auto');
    const inProcess = await open('in-process');
    await load(withVec, db, corpus, server.baseUrl);

    const recall = await measureRecall(withVec, corpus);
    const vecTimes = await timeQueries(withVec, corpus);
    const plainTimes = await timeQueries(inProcess, corpus);
    const hybrid = recall.all.hybrid;
    if (!(hybrid > recall.all.bm25 && hybrid > recall.all.vectors)) {
      throw new Error(
        `memory: hybrid recall@5 ${hybrid} does not beat BM25 ${recall.all.bm25} and vectors ${recall.all.vectors}`,
      );
    }
    const share = (n: number) => n.toFixed(2);
    const p = (times: number[]) =>
      `p95 ${percentile(times, 0.95).toFixed(1)} ms (median ${percentile(times, 0.5).toFixed(1)})`;
    const rows: Row[] = [
      {
        figure: `memory recall@${K}, hybrid (${MEMORIES} memories, ${2 * QUERIES_PER_KIND} queries)`,
        value: share(hybrid),
        baseline: `BM25 ${share(recall.all.bm25)} · vectors ${share(recall.all.vectors)}`,
        ratio: `${(hybrid / Math.max(recall.all.bm25, recall.all.vectors)).toFixed(2)}×`,
      },
      {
        figure: `memory recall@${K}, exact-token / paraphrase queries`,
        value: `hybrid ${share(recall.exact.hybrid)} / ${share(recall.paraphrase.hybrid)}`,
        baseline: `BM25 ${share(recall.exact.bm25)} / ${share(recall.paraphrase.bm25)} · vectors ${share(recall.exact.vectors)} / ${share(recall.paraphrase.vectors)}`,
      },
      {
        figure:
          withVec.store.vectorIndex === 'sqlite-vec'
            ? 'memory query, sqlite-vec'
            : 'memory query, sqlite-vec (did not load: in process)',
        value: p(vecTimes),
        baseline: `in process: ${p(plainTimes)}`,
        ratio: `${(percentile(vecTimes, 0.95) / percentile(plainTimes, 0.95)).toFixed(2)}×`,
      },
    ];
    return {
      rows,
      json: {
        memory: {
          memories: MEMORIES,
          queries: 2 * QUERIES_PER_KIND,
          dims: DIMS,
          recallAt5: recall,
          vectorIndex: withVec.store.vectorIndex,
          queryMs: { sqliteVec: summary(vecTimes), inProcess: summary(plainTimes) },
        },
      },
    };
  } finally {
    db.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The corpus, embedded through the endpoint in the client's batches, in one transaction. */
async function load(
  memory: LongTermMemory,
  db: ReturnType<typeof openDatabase>,
  corpus: Corpus,
  baseUrl: string,
): Promise<void> {
  const client = createEmbeddingClient({ baseUrl, model: MODEL });
  const result = await client.embed(corpus.memories);
  if (!result.ok) throw new Error(`memory: embedding the corpus failed: ${result.error}`);
  const space = { model: MODEL, dim: DIMS };
  // SQLite's inserts run at once under their promise, so one transaction can hold them all.
  db.exec('BEGIN');
  for (const [i, text] of corpus.memories.entries()) {
    await memory.store.insert(
      { kind: 'fact', workspace: memory.workspace, text, origin: 'user' },
      { space, vector: result.vectors[i]! },
    );
  }
  db.exec('COMMIT');
}

async function measureRecall(memory: LongTermMemory, corpus: Corpus) {
  const hits = { exact: count(), paraphrase: count(), all: count() };
  for (const query of corpus.queries) {
    const ranked = await memory.search.rank(query.text, memory.view, K);
    // A failed embeddings request would quietly measure BM25 twice.
    if (ranked.keywordOnly) throw new Error(`memory: a query went keyword-only: ${ranked.keywordOnly}`);
    // Memory ids are the corpus index + 1: the table was empty and filled in order.
    const target = query.target + 1;
    const found: Record<Method, boolean> = {
      hybrid: ranked.fused.slice(0, K).some((r) => r.id === target),
      bm25: ranked.keyword.slice(0, K).some((r) => r.id === target),
      vectors: ranked.vector.slice(0, K).some((r) => r.id === target),
    };
    for (const method of ['hybrid', 'bm25', 'vectors'] as const) {
      if (found[method]) {
        hits[query.kind][method]++;
        hits.all[method]++;
      }
    }
  }
  const share = (c: Record<Method, number>, n: number) => ({
    hybrid: c.hybrid / n,
    bm25: c.bm25 / n,
    vectors: c.vectors / n,
  });
  return {
    exact: share(hits.exact, QUERIES_PER_KIND),
    paraphrase: share(hits.paraphrase, QUERIES_PER_KIND),
    all: share(hits.all, 2 * QUERIES_PER_KIND),
  };
}

function count(): Record<Method, number> {
  return { hybrid: 0, bm25: 0, vectors: 0 };
}

/** Every query once after a warm-up (the first in-process search reads all vectors into memory). */
async function timeQueries(memory: LongTermMemory, corpus: Corpus): Promise<number[]> {
  await memory.find(corpus.queries[0]!.text, K);
  const times: number[] = [];
  for (const query of corpus.queries) {
    const started = performance.now();
    await memory.find(query.text, K);
    times.push(performance.now() - started);
  }
  return times;
}

function percentile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function summary(times: number[]) {
  return { p50: percentile(times, 0.5), p95: percentile(times, 0.95), max: Math.max(...times) };
}
