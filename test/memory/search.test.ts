import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { RRF_K, reciprocalRankFusion } from '../../src/memory/fusion.js';
import { REEMBED_PER_SEARCH } from '../../src/memory/hybrid-search.js';
import { ftsQuery, keywordSearch } from '../../src/memory/keyword-search.js';
import type { LongTermMemory } from '../../src/memory/memory.js';
import { chooseVectorIndex, openMemory } from '../../src/memory/open-memory.js';
import { openDatabase } from '../../src/store/database.js';
import { type MemoryRig, memoryRig } from './support.js';

let rig: MemoryRig;
beforeEach(async () => {
  rig = await memoryRig({ 'trigram-a': 64, 'trigram-b': 32 });
});
afterEach(async () => {
  await rig.close();
});

async function seed(memory: LongTermMemory, texts: string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const text of texts) {
    const kept = await memory.remember({ kind: 'fact', workspace: rig.workspace, text, origin: 'user' });
    ids.push(kept.memory.id);
  }
  return ids;
}

const NOTES = [
  'The nightly build fails with ERR_SQLITE_4821 when the disk is full.',
  'Database migrations live in src/store/migrations.ts and are append-only.',
  'The user prefers tabs over spaces in Makefiles.',
  'Release notes are written in CHANGELOG.md before tagging.',
  'Integration tests need the docker daemon running.',
];

describe('keyword search (FTS5, BM25)', () => {
  it('finds an exact token such as an error code or a path, and follows edits and deletions', async () => {
    const memory = await rig.open({ server: false });
    const [code, migrations] = await seed(memory, NOTES);
    expect(keywordSearch(rig.db, 'ERR_SQLITE_4821', memory.view, 5)[0]?.id).toBe(code);
    expect(keywordSearch(rig.db, 'src/store/migrations.ts', memory.view, 5)[0]?.id).toBe(migrations);

    memory.store.updateText(code!, 'The nightly build fails with ENOSPC when the disk is full.');
    expect(keywordSearch(rig.db, 'ERR_SQLITE_4821', memory.view, 5)).toEqual([]);
    expect(keywordSearch(rig.db, 'ENOSPC', memory.view, 5)[0]?.id).toBe(code);
    memory.forget(migrations!);
    expect(keywordSearch(rig.db, 'migrations', memory.view, 5)).toEqual([]);
  });

  it('reads FTS5 syntax in the query as plain words', async () => {
    const memory = await rig.open({ server: false });
    await seed(memory, NOTES);
    expect(ftsQuery('tabs AND -spaces: "x* NEAR(')).toBe('"tabs" OR "spaces" OR "x" OR "NEAR"');
    expect(keywordSearch(rig.db, 'tabs AND -spaces: "x* NEAR(', memory.view, 5).length).toBeGreaterThan(0);
    expect(keywordSearch(rig.db, '?? -- !!', memory.view, 5)).toEqual([]);
  });

  it("keeps to this workspace's memories and the user-wide ones", async () => {
    const memory = await rig.open({ server: false });
    const store = memory.store;
    const mine = store.insert({
      kind: 'fact',
      workspace: rig.workspace,
      text: 'kettle is here',
      origin: 'user',
    });
    const user = store.insert({
      kind: 'preference',
      workspace: null,
      text: 'kettle everywhere',
      origin: 'user',
    });
    store.insert({ kind: 'fact', workspace: '/elsewhere', text: 'kettle elsewhere', origin: 'user' });
    const ids = keywordSearch(rig.db, 'kettle', memory.view, 10).map((r) => r.id);
    expect(ids.sort()).toEqual([mine.id, user.id].sort());
    expect(keywordSearch(rig.db, 'kettle', 'all', 10)).toHaveLength(3);
  });
});

describe('vector search over /v1/embeddings', () => {
  it('finds a memory by likeness where no word matches, through the server', async () => {
    const memory = await rig.open({ model: 'trigram-a' });
    const ids = await seed(memory, NOTES);
    const query = 'databse migratons apend onyl';
    expect(keywordSearch(rig.db, query, memory.view, 5)).toEqual([]);
    const found = await memory.find(query, 3);
    expect(found.keywordOnly).toBeUndefined();
    expect(found.hits[0]?.memory.id).toBe(ids[1]);
    expect(rig.embeddingCalls.at(-1)).toEqual({ model: 'trigram-a', input: [query] });
  });

  it('gives the same ranking with sqlite-vec and with cosine in process', async () => {
    const memory = await rig.open({ model: 'trigram-a' });
    await seed(memory, NOTES);
    const vec = await chooseVectorIndex(rig.db, 'auto');
    const inProcess = await chooseVectorIndex(rig.db, 'in-process');
    expect(vec.kind).toBe('sqlite-vec');
    const probe = await memory.search.embedOne('docker integration tests');
    const space = probe!.space;
    const a = vec.search(probe!.vector, space, memory.view, 5);
    const b = inProcess.search(probe!.vector, space, memory.view, 5);
    expect(a.map((r) => r.id)).toEqual(b.map((r) => r.id));
    for (const [i, r] of a.entries()) expect(r.score).toBeCloseTo(b[i]!.score, 5);
    expect(a[0]!.score).toBeGreaterThan(0.3);
  });

  it('says it is keyword-only when the server has no embeddings model, and still finds exact tokens', async () => {
    const plain = await memoryRig();
    try {
      await plain.server.close();
      const memory = await plain.open({ server: false });
      await memory.remember({ kind: 'fact', workspace: plain.workspace, text: NOTES[0]!, origin: 'user' });
      const found = await memory.find('ERR_SQLITE_4821', 5);
      expect(found.keywordOnly).toMatch(/no model server/);
      expect(found.hits[0]?.memory.text).toBe(NOTES[0]);
    } finally {
      await plain.close().catch(() => {});
    }
  });

  it('finds no embeddings model on a server that lists none, and says how to get one', async () => {
    const memory = await rig.open();
    // The rig's server lists "trigram-embed": found by name, as hearth doctor finds it.
    expect((await memory.find('anything', 1)).keywordOnly).toBeUndefined();
    expect(rig.embeddingCalls.at(-1)?.model).toBe('trigram-embed');
  });
});

describe('Reciprocal Rank Fusion', () => {
  it('sums 1/(k + rank) over the lists, so agreement beats a single first place', () => {
    const fused = reciprocalRankFusion([
      [
        { id: 1, score: 9 },
        { id: 2, score: 8 },
      ],
      [
        { id: 3, score: 0.9 },
        { id: 2, score: 0.8 },
      ],
    ]);
    expect(fused.map((r) => r.id)).toEqual([2, 1, 3]);
    expect(fused[0]!.score).toBeCloseTo(2 / (RRF_K + 2), 12);
    expect(fused[1]!.score).toBeCloseTo(1 / (RRF_K + 1), 12);
  });

  it('ranks first what both searches found in a hybrid query', async () => {
    const memory = await rig.open({ model: 'trigram-a' });
    const ids = await seed(memory, [
      ...NOTES,
      'ERR_SQLITE_4821 also appears in the importer logs.',
      'The nightly build is slow on weekends.',
    ]);
    const ranked = await memory.search.rank('nightly build ERR_SQLITE_4821 disk', memory.view, 3);
    expect(ranked.keyword.length).toBeGreaterThan(0);
    expect(ranked.vector.length).toBeGreaterThan(0);
    expect(ranked.fused[0]!.id).toBe(ids[0]);
  });
});

describe('a change of embeddings model', () => {
  it('re-embeds lazily, a batch per search, and never compares vectors of two models', async () => {
    const first = await rig.open({ model: 'trigram-a' });
    for (let i = 0; i < 40; i++) {
      first.store.insert({
        kind: 'fact',
        workspace: rig.workspace,
        text: `note number ${i} about subsystem ${i % 7}`,
        origin: 'user',
      });
    }
    // Embedded lazily by model A too: a batch with the first search, the rest with the second.
    await first.find('subsystem', 1);
    expect(first.store.countUnembedded('trigram-a', 64)).toBe(40 - REEMBED_PER_SEARCH);
    await first.find('subsystem', 1);
    expect(first.store.countUnembedded('trigram-a', 64)).toBe(0);

    const second = await rig.open({ model: 'trigram-b' });
    expect(second.store.countUnembedded('trigram-b', undefined)).toBe(40);
    const found = await second.find('note number 3 about subsystem 3', 5);
    const call = rig.embeddingCalls.at(-1)!;
    expect(call.model).toBe('trigram-b');
    expect(call.input).toHaveLength(1 + REEMBED_PER_SEARCH);
    expect(second.store.countUnembedded('trigram-b', 32)).toBe(40 - REEMBED_PER_SEARCH);
    // Only the memories now in the new space take part in the vector list.
    const ranked = await second.search.rank('subsystem', second.view, 40);
    const inNewSpace = new Set(
      (
        rig.db
          .prepare("SELECT id FROM memories WHERE embedding_model = 'trigram-b' AND embedding_dim = 32")
          .all() as Array<{
          id: number;
        }>
      ).map((r) => r.id),
    );
    expect(ranked.vector.every((r) => inNewSpace.has(r.id))).toBe(true);
    expect(found.hits.length).toBeGreaterThan(0);
    expect(second.store.countUnembedded('trigram-b', 32)).toBe(0);
    const dims = rig.db.prepare('SELECT DISTINCT embedding_dim AS d FROM memories').all();
    expect(dims).toEqual([{ d: 32 }]);
    expect(rig.db.prepare('SELECT model, dim FROM memory_vec_meta').get()).toEqual({
      model: 'trigram-b',
      dim: 32,
    });
  });
});

describe('remembering', () => {
  it('keeps one copy of the same text, or of nearly the same words', async () => {
    const memory = await rig.open({ model: 'trigram-a' });
    const a = await memory.remember({
      kind: 'fact',
      workspace: rig.workspace,
      text: 'Run the tests with npm test.',
      origin: 'user',
    });
    const b = await memory.remember({
      kind: 'fact',
      workspace: rig.workspace,
      text: 'run the tests  with npm test',
      origin: 'user',
    });
    const c = await memory.remember({
      kind: 'fact',
      workspace: rig.workspace,
      text: 'Run all the tests with npm test.',
      origin: 'user',
    });
    expect(b).toEqual({ memory: a.memory, duplicate: true });
    expect(c.duplicate).toBe(true);
    expect(memory.store.count('all')).toBe(1);
  });
});

describe('a database indexed by sqlite-vec, opened where the extension does not load', () => {
  it('still takes new memories and searches them in process', async () => {
    const withVec = await rig.open({ model: 'trigram-a' });
    await seed(withVec, NOTES);
    await withVec.find('docker', 1);
    expect(rig.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'memory_vec'").get()).toBeDefined();

    const plain = openDatabase(rig.dbPath);
    try {
      const memory = await openMemory({
        db: plain,
        config: configSchema.parse({ memory: { embedding_model: 'trigram-a' } }),
        workspace: rig.workspace,
        home: rig.home,
        server: { baseUrl: rig.server.baseUrl },
        vectors: 'in-process',
      });
      const added = await memory.remember({
        kind: 'fact',
        workspace: rig.workspace,
        text: 'The kettle whistles at noon.',
        origin: 'user',
      });
      memory.forget((await memory.find('docker daemon', 1)).hits[0]!.memory.id);
      expect((await memory.find('kettle whistles', 1)).hits[0]?.memory.id).toBe(added.memory.id);
    } finally {
      plain.close();
    }
    // Back where sqlite-vec loads: the queued changes are applied before the next vector search.
    const again = await rig.open({ model: 'trigram-a' });
    const probe = await again.search.embedOne('kettle whistles at noon');
    const nearest = again.search.vectors.search(probe!.vector, probe!.space, again.view, 10).map((r) => r.id);
    expect(again.store.byIds(nearest).map((m) => m.text)).toContain('The kettle whistles at noon.');
    expect(again.store.byIds(nearest).some((m) => m.text.includes('docker'))).toBe(false);
  });
});
