import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { RRF_K, reciprocalRankFusion } from '../../src/memory/fusion.js';
import { REEMBED_PER_SEARCH } from '../../src/memory/hybrid-search.js';
import type { LongTermMemory } from '../../src/memory/memory.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { ftsQuery, websearchQuery } from '../../src/store/memory/keyword-search.js';
import { InProcessVectorIndex } from '../../src/store/memory/vector-index.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteMemoryStorage } from '../../src/store/sqlite/memory.js';
import { SessionStore } from '../../src/store/sqlite/session-store.js';
import { SqliteVecIndex } from '../../src/store/sqlite/vec-index.js';
import { describeBackends, type MemoryRig, memoryRig } from './support.js';

const NOTES = [
  'The nightly build fails with ERR_SQLITE_4821 when the disk is full.',
  'Database migrations live in src/store/migrations.ts and are append-only.',
  'The user prefers tabs over spaces in Makefiles.',
  'Release notes are written in CHANGELOG.md before tagging.',
  'Integration tests need the docker daemon running.',
];

/** Text a user (or a prompt-injected model) might search with, full of either backend's query syntax. */
const HOSTILE = [
  'tabs AND -spaces: "x* NEAR(',
  `tabs' ; drop table memories; --`,
  'tabs & !spaces | (x <-> y) :* <2>',
  'tabs \\" \\\\ "unclosed',
  'NOT OR AND "" * ^ tabs',
  '\u0000tabs\u0007',
];

function seeder(rig: () => MemoryRig) {
  return async (memory: LongTermMemory, texts: string[]): Promise<number[]> => {
    const ids: number[] = [];
    for (const text of texts) {
      const kept = await memory.remember({ kind: 'fact', workspace: rig().workspace, text, origin: 'user' });
      ids.push(kept.memory.id);
    }
    return ids;
  };
}

describe('queries built from free text', () => {
  it('quote every word as a phrase, so no query syntax survives', () => {
    expect(ftsQuery('tabs AND -spaces: "x* NEAR(')).toBe('"tabs" OR "spaces" OR "x" OR "NEAR"');
    expect(websearchQuery('tabs AND -spaces: "x* NEAR(')).toBe('"tabs" or "spaces" or "x" or "NEAR"');
    expect(websearchQuery('say "hi" or -quietly')).toBe('"say" or "hi" or "quietly"');
    expect(ftsQuery('?? -- !!')).toBeUndefined();
    expect(websearchQuery('the a of')).toBeUndefined();
  });
});

describeBackends('memory search', (backend) => {
  let rig: MemoryRig;
  const seed = seeder(() => rig);
  beforeEach(async () => {
    rig = await memoryRig({ 'trigram-a': 64, 'trigram-b': 32 }, backend);
  });
  afterEach(async () => {
    await rig.close();
  });

  describe('keywords', () => {
    it('finds an exact token such as an error code or a path, and follows edits and deletions', async () => {
      const memory = await rig.open({ server: false });
      const [code, migrations] = await seed(memory, NOTES);
      const store = memory.store;
      expect((await store.keywordSearch('ERR_SQLITE_4821', memory.view, 5))[0]?.id).toBe(code);
      expect((await store.keywordSearch('src/store/migrations.ts', memory.view, 5))[0]?.id).toBe(migrations);

      await store.updateText(code!, 'The nightly build fails with ENOSPC when the disk is full.');
      expect(await store.keywordSearch('ERR_SQLITE_4821', memory.view, 5)).toEqual([]);
      expect((await store.keywordSearch('ENOSPC', memory.view, 5))[0]?.id).toBe(code);
      expect(await memory.forget(migrations!)).toBe(true);
      expect(await store.keywordSearch('migrations', memory.view, 5)).toEqual([]);
    });

    it('ranks the memory matching more of the words first', async () => {
      const memory = await rig.open({ server: false });
      const [, , tabs] = await seed(memory, NOTES);
      const ranked = await memory.store.keywordSearch('tabs spaces makefiles', memory.view, 5);
      expect(ranked[0]?.id).toBe(tabs);
      expect(ranked.every((r, i) => i === 0 || r.score <= ranked[i - 1]!.score)).toBe(true);
    });

    it('reads query syntax and hostile text in the query as plain words', async () => {
      const memory = await rig.open({ server: false });
      const [, , tabs] = await seed(memory, [...NOTES, "O'Reilly's book explains tabs' history."]);
      for (const query of HOSTILE) {
        const ids = (await memory.store.keywordSearch(query, memory.view, 5)).map((r) => r.id);
        expect(ids, query).toContain(tabs);
      }
      expect(await memory.store.keywordSearch('?? -- !!', memory.view, 5)).toEqual([]);
      expect((await memory.find(`O'Reilly's`, 3)).hits[0]?.memory.text).toMatch(/O'Reilly/);
      expect(await memory.store.count('all')).toBe(NOTES.length + 1);
    });

    it("keeps to this workspace's memories and the user-wide ones", async () => {
      const memory = await rig.open({ server: false });
      const store = memory.store;
      const mine = await store.insert({
        kind: 'fact',
        workspace: rig.workspace,
        text: 'kettle is here',
        origin: 'user',
      });
      const user = await store.insert({
        kind: 'preference',
        workspace: null,
        text: 'kettle everywhere',
        origin: 'user',
      });
      const other = await store.insert({
        kind: 'fact',
        workspace: '/elsewhere',
        text: 'kettle elsewhere',
        origin: 'user',
      });
      const ids = (await store.keywordSearch('kettle', memory.view, 10)).map((r) => r.id);
      expect(ids.sort()).toEqual([mine.id, user.id].sort());
      expect(await store.keywordSearch('kettle', 'all', 10)).toHaveLength(3);
      expect((await store.list(memory.view, { scope: 'user' })).map((m) => m.id)).toEqual([user.id]);
      expect((await store.list(memory.view, { scope: 'project' })).map((m) => m.id)).toEqual([mine.id]);
      expect((await store.list('all', { kinds: ['preference'] })).map((m) => m.id)).toEqual([user.id]);
      // Another workspace's memory is not this one's to forget.
      expect(await memory.forget(other.id)).toBe(false);
      expect(await store.get(other.id)).toBeDefined();
    });
  });

  describe('vectors over /v1/embeddings', () => {
    it('finds a memory by likeness where no word matches, through the server', async () => {
      const memory = await rig.open({ model: 'trigram-a' });
      const ids = await seed(memory, NOTES);
      const query = 'databse migratons apend onyl';
      expect(await memory.store.keywordSearch(query, memory.view, 5)).toEqual([]);
      const found = await memory.find(query, 3);
      expect(found.keywordOnly).toBeUndefined();
      expect(found.hits[0]?.memory.id).toBe(ids[1]);
      expect(rig.embeddingCalls.at(-1)).toEqual({ model: 'trigram-a', input: [query] });
    });

    it('scans every vector, whatever the batches, and keeps to the view', async () => {
      const memory = await rig.open({ model: 'trigram-a' });
      const texts = Array.from(
        { length: 30 },
        (_, i) => `topic ${i}: ${'abcdefghijklmnopqrstuvwxyz'.slice(i % 20, (i % 20) + 6)} notes`,
      );
      // Stored as they are: remember() would keep one of each near-duplicate.
      const ids: number[] = [];
      for (const text of texts) {
        const embedded = await memory.search.embedOne(text);
        ids.push(
          (
            await memory.store.insert(
              { kind: 'fact', workspace: rig.workspace, text, origin: 'user' },
              embedded,
            )
          ).id,
        );
      }
      const elsewhere = await memory.store.insert(
        { kind: 'fact', workspace: '/elsewhere', text: texts[29]!, origin: 'user' },
        await memory.search.embedOne(texts[29]!),
      );
      const probe = (await memory.search.embedOne(texts[29]!))!;
      const nearest = await memory.store.nearest(probe.vector, probe.space, memory.view, 3);
      expect(nearest[0]?.id).toBe(ids[29]);
      expect(nearest[0]!.score).toBeCloseTo(1, 5);
      expect(nearest.map((r) => r.id)).not.toContain(elsewhere.id);
      expect((await memory.store.nearest(probe.vector, probe.space, 'all', 40)).length).toBe(31);
      // Another space (model or dimension) is never compared.
      expect(await memory.store.nearest(probe.vector, { model: 'trigram-b', dim: 64 }, 'all', 5)).toEqual([]);
    });

    it('says it is keyword-only when there is no model server, and still finds exact tokens', async () => {
      const memory = await rig.open({ server: false });
      await memory.remember({ kind: 'fact', workspace: rig.workspace, text: NOTES[0]!, origin: 'user' });
      const found = await memory.find('ERR_SQLITE_4821', 5);
      expect(found.keywordOnly).toMatch(/no model server/);
      expect(found.hits[0]?.memory.text).toBe(NOTES[0]);
    });

    it('finds the embeddings model the server lists, as hearth doctor finds it', async () => {
      const memory = await rig.open();
      expect((await memory.find('anything', 1)).keywordOnly).toBeUndefined();
      expect(rig.embeddingCalls.at(-1)?.model).toBe('trigram-embed');
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
        await first.store.insert({
          kind: 'fact',
          workspace: rig.workspace,
          text: `note number ${i} about subsystem ${i % 7}`,
          origin: 'user',
        });
      }
      // Embedded lazily by model A too: a batch with the first search, the rest with the second.
      await first.find('subsystem', 1);
      expect(await first.store.countUnembedded('trigram-a', 64)).toBe(40 - REEMBED_PER_SEARCH);
      await first.find('subsystem', 1);
      expect(await first.store.countUnembedded('trigram-a', 64)).toBe(0);

      const second = await rig.open({ model: 'trigram-b' });
      expect(await second.store.countUnembedded('trigram-b', undefined)).toBe(40);
      const ranked = await second.search.rank('note number 3 about subsystem 3', second.view, 40);
      const call = rig.embeddingCalls.at(-1)!;
      expect(call.model).toBe('trigram-b');
      expect(call.input).toHaveLength(1 + REEMBED_PER_SEARCH);
      expect(await second.store.countUnembedded('trigram-b', 32)).toBe(40 - REEMBED_PER_SEARCH);
      // Only the memories now in the new space take part in the vector list: the others are not compared.
      const inNewSpace = new Set(
        (await second.store.list('all')).filter((m) => m.embeddingModel === 'trigram-b').map((m) => m.id),
      );
      expect(inNewSpace.size).toBe(REEMBED_PER_SEARCH);
      expect(ranked.vector).toHaveLength(REEMBED_PER_SEARCH);
      expect(ranked.vector.every((r) => inNewSpace.has(r.id))).toBe(true);
      const found = await second.find('note number 3 about subsystem 3', 5);
      expect(found.hits.length).toBeGreaterThan(0);
      expect(await second.store.countUnembedded('trigram-b', 32)).toBe(0);
      expect((await second.store.list('all')).every((m) => m.embeddingModel === 'trigram-b')).toBe(true);
    });
  });

  describe('keeping and forgetting', () => {
    it('keeps one copy of the same text, or of nearly the same words', async () => {
      const memory = await rig.open({ model: 'trigram-a' });
      const kept = (text: string) =>
        memory.remember({ kind: 'fact', workspace: rig.workspace, text, origin: 'user' });
      const a = await kept('Run the tests with npm test.');
      const b = await kept('run the tests  with npm test');
      const c = await kept('Run all the tests with npm test.');
      expect(b).toEqual({ memory: a.memory, duplicate: true });
      expect(c.duplicate).toBe(true);
      expect(await memory.store.count('all')).toBe(1);
      expect(await memory.store.sameText('all', '  RUN the tests with npm test!')).toEqual(a.memory);
    });

    it('takes text with control characters, NUL included (PostgreSQL drops the NUL)', async () => {
      const memory = await rig.open({ model: 'trigram-a' });
      const kept = await memory.remember({
        kind: 'fact',
        workspace: rig.workspace,
        text: 'The bell\u0000 rings\u0007 at noon.',
        origin: 'user',
      });
      expect(kept.duplicate).toBe(false);
      const found = await memory.find('bell\u0000 rings', 1);
      expect(found.hits[0]?.memory.id).toBe(kept.memory.id);
      expect(await memory.store.sameText(memory.view, 'the bell\u0000 rings\u0007 at noon')).toBeDefined();
      const port = memory.forSession({ sessionId: 'x', messageSeq: () => 0 });
      expect((await port.recall('\u0000bell\u0000', 1)).memories[0]?.id).toBe(kept.memory.id);
    });

    it('counts a use of each memory a session is shown or recalls', async () => {
      const memory = await rig.open({ server: false, budget: 400 });
      const [code] = await seed(memory, NOTES);
      const session = new SessionStore(rig.db).create({ workspace: rig.workspace, model: 'chat-model' }, [
        { role: 'system', content: 'You are Hearth.' },
      ]).id;
      const port = memory.forSession({ sessionId: session, messageSeq: () => 3 });
      const recalled = await port.recall('ERR_SQLITE_4821', 1);
      expect(recalled.memories.map((m) => m.id)).toEqual([code]);
      expect((await memory.store.get(code!))!.useCount).toBe(1);
      const block = await memory.preface('why does the nightly build fail?');
      expect(block).toContain('ERR_SQLITE_4821');
      expect((await memory.store.get(code!))!.useCount).toBe(2);
      expect((await memory.store.mostUsed(memory.view, 1))[0]?.id).toBe(code);
      const remembered = await port.remember({ text: 'The kettle is blue.', kind: 'fact', scope: 'user' });
      const stored = (await memory.store.get(remembered.id))!;
      expect([stored.workspace, stored.sessionId, stored.messageSeq, stored.origin]).toEqual([
        null,
        session,
        3,
        'tool',
      ]);
      expect(await port.forget(remembered.id)).toBe(true);
      expect(await memory.store.get(remembered.id)).toBeUndefined();
    });

    it('keeps the notes of MEMORY.md in line with the file', async () => {
      const { mkdir, writeFile } = await import('node:fs/promises');
      await mkdir(rig.home, { recursive: true });
      await writeFile(
        `${rig.home}/MEMORY.md`,
        '- The staging host is staging.example.\n- Deploys happen on Fridays.\n',
      );
      const first = await rig.open({ server: false });
      await first.syncFiles();
      expect((await first.store.list('all')).map((m) => m.text).sort()).toEqual([
        'Deploys happen on Fridays.',
        'The staging host is staging.example.',
      ]);
      await writeFile(
        `${rig.home}/MEMORY.md`,
        '- The staging host is staging.example.\n- Never deploy on Fridays.\n',
      );
      const again = await rig.open({ server: false });
      await again.syncFiles();
      const rows = await again.store.list('all');
      expect(rows.map((m) => m.text).sort()).toEqual([
        'Never deploy on Fridays.',
        'The staging host is staging.example.',
      ]);
      expect(rows.every((m) => m.origin === 'file' && m.workspace === null)).toBe(true);
    });
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
});

describe('SQLite vector indexes', () => {
  let rig: MemoryRig;
  const seed = seeder(() => rig);
  beforeEach(async () => {
    rig = await memoryRig({ 'trigram-a': 64, 'trigram-b': 32 });
  });
  afterEach(async () => {
    await rig.close();
  });

  it('gives the same ranking with sqlite-vec and with cosine in process', async () => {
    const memory = await rig.open({ model: 'trigram-a' });
    await seed(memory, NOTES);
    const vec = SqliteVecIndex.load(rig.db).index!;
    const inProcess = new InProcessVectorIndex(rig.db);
    expect(memory.store.vectorIndex).toBe('sqlite-vec');
    const probe = await memory.search.embedOne('docker integration tests');
    const space = probe!.space;
    const a = vec.search(probe!.vector, space, memory.view, 5);
    const b = inProcess.search(probe!.vector, space, memory.view, 5);
    expect(a.map((r) => r.id)).toEqual(b.map((r) => r.id));
    for (const [i, r] of a.entries()) expect(r.score).toBeCloseTo(b[i]!.score, 5);
    expect(a[0]!.score).toBeGreaterThan(0.3);
  });

  it('rebuilds the sqlite-vec table for a new model, so dimensions never mix', async () => {
    const first = await rig.open({ model: 'trigram-a' });
    await seed(first, NOTES);
    await first.find('docker', 1);
    const second = await rig.open({ model: 'trigram-b' });
    await second.find('docker', 1);
    expect(rig.db.prepare('SELECT model, dim FROM memory_vec_meta').get()).toEqual({
      model: 'trigram-b',
      dim: 32,
    });
  });

  it('a database indexed by sqlite-vec, opened where the extension does not load, still takes new memories and searches them in process', async () => {
    const withVec = await rig.open({ model: 'trigram-a' });
    await seed(withVec, NOTES);
    await withVec.find('docker', 1);
    expect(rig.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'memory_vec'").get()).toBeDefined();

    const plain = openDatabase(rig.dbPath);
    try {
      const memory = await openMemory({
        storage: await SqliteMemoryStorage.open(plain, { vectors: 'in-process' }),
        config: configSchema.parse({ memory: { embedding_model: 'trigram-a' } }),
        workspace: rig.workspace,
        home: rig.home,
        server: { baseUrl: rig.server.baseUrl },
      });
      const added = await memory.remember({
        kind: 'fact',
        workspace: rig.workspace,
        text: 'The kettle whistles at noon.',
        origin: 'user',
      });
      await memory.forget((await memory.find('docker daemon', 1)).hits[0]!.memory.id);
      expect((await memory.find('kettle whistles', 1)).hits[0]?.memory.id).toBe(added.memory.id);
    } finally {
      plain.close();
    }
    // Back where sqlite-vec loads: the queued changes are applied before the next vector search.
    const again = await rig.open({ model: 'trigram-a' });
    const probe = await again.search.embedOne('kettle whistles at noon');
    const nearest = (await again.store.nearest(probe!.vector, probe!.space, again.view, 10)).map((r) => r.id);
    const texts = (await again.store.byIds(nearest)).map((m) => m.text);
    expect(texts).toContain('The kettle whistles at noon.');
    expect(texts.some((t) => t.includes('docker'))).toBe(false);
  });
});
