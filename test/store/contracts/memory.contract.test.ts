/**
 * The memory storage contract (src/memory/storage.ts), one suite over both backends: memories and
 * their views, use counts, sameness of text, vectors kept per model and dimension, keyword and
 * nearest search, a memory file kept in line, and reflection's proposals with their one-time
 * decisions. The backends differ on purpose only where the interface says so: how text and vectors
 * are searched (so scores are compared by order, never by value), and PostgreSQL's text, which
 * cannot hold a NUL, drops it (src/memory/postgres-queries.ts).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { MemoryStorage } from '../../../src/memory/storage.js';
import type { NewMemory, VectorSpace } from '../../../src/memory/types.js';
import type { SessionStorage } from '../../../src/store/session-storage.js';
import { describeEachBackend, type StorePlace } from '../../support/store-backends.js';

const T0 = Date.parse('2026-03-02T08:00:00Z');
const WS = { workspace: '/ws' };
const fact = (text: string, workspace: string | null = '/ws', more: Partial<NewMemory> = {}): NewMemory => ({
  kind: 'fact',
  workspace,
  text,
  origin: 'tool',
  ...more,
});
const SPACE: VectorSpace = { model: 'embed-a', dim: 3 };
const vec = (...v: number[]) => new Float32Array(v);

describeEachBackend('memory storage', (backend) => {
  let place: StorePlace;
  let sessions: SessionStorage;
  /** The time both handles store, moved on by each test: never the wall clock. */
  let time: number;
  let store: MemoryStorage;
  let other: MemoryStorage;
  beforeEach(async () => {
    time = T0;
    place = await backend.fresh();
    sessions = await place.sessions();
    store = await place.memory({ now: () => time });
    other = await place.memory({ now: () => time });
  });
  const tick = () => {
    time += 1000;
  };

  it('stores a memory and reads it back from another handle; nothing for an id it does not have', async () => {
    const m = await store.insert(
      fact('the build uses pnpm', '/ws', { detail: 'seen in CI', origin: 'user' }),
    );
    expect(m).toMatchObject({
      kind: 'fact',
      workspace: '/ws',
      text: 'the build uses pnpm',
      detail: 'seen in CI',
      origin: 'user',
      sourceFile: null,
      sessionId: null,
      messageSeq: null,
      createdAt: T0,
      updatedAt: T0,
      useCount: 0,
      embeddingModel: null,
    });
    expect(await other.get(m.id)).toEqual(m);
    expect(await other.get(m.id + 1000)).toBeUndefined();
    expect(await other.delete(m.id)).toBe(true);
    expect(await store.delete(m.id)).toBe(false);
    expect(await store.get(m.id)).toBeUndefined();
  });

  it('reads rows by id in the order given, leaving out missing ones', async () => {
    const [a, b, c] = [
      await store.insert(fact('a')),
      await store.insert(fact('b')),
      await store.insert(fact('c')),
    ];
    expect((await other.byIds([c.id, 999_999, a.id, b.id])).map((m) => m.text)).toEqual(['c', 'a', 'b']);
    expect(await other.byIds([])).toEqual([]);
  });

  it('lists a view newest first, by kind, scope and limit, and counts it', async () => {
    await store.insert(fact('mine'));
    tick();
    await store.insert(fact('user-wide', null, { kind: 'preference' }));
    tick();
    await store.insert(fact('elsewhere', '/other'));
    tick();
    await store.insert(fact('learnt', '/ws', { kind: 'learning' }));
    const texts = async (...args: Parameters<MemoryStorage['list']>) =>
      (await other.list(...args)).map((m) => m.text);
    expect(await texts(WS)).toEqual(['learnt', 'user-wide', 'mine']);
    expect(await texts('all')).toEqual(['learnt', 'elsewhere', 'user-wide', 'mine']);
    expect(await texts(WS, { kinds: ['fact', 'preference'] })).toEqual(['user-wide', 'mine']);
    expect(await texts(WS, { scope: 'user' })).toEqual(['user-wide']);
    expect(await texts(WS, { scope: 'project' })).toEqual(['learnt', 'mine']);
    expect(await texts(WS, { limit: 1 })).toEqual(['learnt']);
    expect(await other.count(WS)).toBe(3);
    expect(await other.count('all')).toBe(4);
    expect(await other.count({ workspace: '/none' })).toBe(1);
  });

  it('counts uses, and puts the most used first, then the newest', async () => {
    const [a, b, c] = [
      await store.insert(fact('a')),
      await store.insert(fact('b')),
      await store.insert(fact('c')),
    ];
    await store.countUse([b.id, c.id]);
    await other.countUse([b.id]);
    await other.countUse([]);
    expect((await store.mostUsed(WS, 2)).map((m) => m.text)).toEqual(['b', 'c']);
    expect((await store.get(b.id))?.useCount).toBe(2);
    expect((await store.get(a.id))?.useCount).toBe(0);
  });

  it('finds the same text whatever its case, spacing and trailing punctuation, within the view', async () => {
    const m = await store.insert(fact('Tests run with  Vitest.'));
    expect((await other.sameText(WS, 'tests run with vitest'))?.id).toBe(m.id);
    expect((await other.sameText(WS, '  TESTS RUN WITH VITEST!! '))?.id).toBe(m.id);
    expect(await other.sameText(WS, 'tests run with jest')).toBeUndefined();
    expect(await other.sameText({ workspace: '/other' }, 'tests run with vitest')).toBeUndefined();
  });

  it('keeps vectors per model and dimension, and forgets a vector when the text changes', async () => {
    const a = await store.insert(fact('alpha'), { space: SPACE, vector: vec(1, 0, 0) });
    const b = await store.insert(fact('beta'));
    tick();
    await store.countUse([b.id]);
    expect(a.embeddingModel).toBe('embed-a');
    expect(await other.unembedded('embed-a', 3, 10)).toEqual([{ id: b.id, text: 'beta' }]);
    expect(await other.countUnembedded('embed-a', 3)).toBe(1);
    // Another model, or another dimension of it, counts every memory as not embedded.
    expect(await other.countUnembedded('embed-b', undefined)).toBe(2);
    expect(await other.countUnembedded('embed-a', 4)).toBe(2);
    expect((await other.unembedded('embed-b', undefined, 10)).map((r) => r.id)).toEqual([b.id, a.id]);
    await other.setEmbeddings(SPACE, [{ id: b.id, vector: vec(0, 1, 0) }]);
    await other.setEmbeddings(SPACE, []);
    expect(await store.countUnembedded('embed-a', 3)).toBe(0);
    tick();
    await store.updateText(a.id, 'alpha, edited');
    expect(await other.get(a.id)).toMatchObject({
      text: 'alpha, edited',
      embeddingModel: null,
      updatedAt: time,
    });
    expect(await other.unembedded('embed-a', 3, 10)).toEqual([{ id: a.id, text: 'alpha, edited' }]);
  });

  it('finds the nearest vectors of one space only, by cosine, best first, within the view', async () => {
    const near = await store.insert(fact('near'), { space: SPACE, vector: vec(1, 0.1, 0) });
    const far = await store.insert(fact('far'), { space: SPACE, vector: vec(0, 1, 0) });
    const opposite = await store.insert(fact('opposite'), { space: SPACE, vector: vec(-1, 0, 0) });
    await store.insert(fact('other model'), { space: { model: 'embed-b', dim: 3 }, vector: vec(1, 0, 0) });
    await store.insert(fact('other dim'), { space: { model: 'embed-a', dim: 2 }, vector: vec(1, 0) });
    await store.insert(fact('elsewhere', '/other'), { space: SPACE, vector: vec(1, 0, 0) });
    const ranked = await other.nearest(vec(1, 0, 0), SPACE, WS, 10);
    expect(ranked.map((r) => r.id)).toEqual([near.id, far.id, opposite.id]);
    expect(ranked[0]!.score).toBeGreaterThan(ranked[1]!.score);
    expect(ranked[1]!.score).toBeGreaterThan(ranked[2]!.score);
    expect((await other.nearest(vec(1, 0, 0), SPACE, WS, 1)).map((r) => r.id)).toEqual([near.id]);
    expect((await other.nearest(vec(1, 0, 0), SPACE, 'all', 10)).map((r) => r.id)).toHaveLength(4);
  });

  it('searches words as words, best match first, within the view', async () => {
    const both = await store.insert(fact('deploy with the staging script ERR_42'));
    const one = await store.insert(fact('the staging server is slow'));
    await store.insert(fact('staging elsewhere', '/other'));
    const ids = async (text: string) => (await other.keywordSearch(text, WS, 10)).map((r) => r.id);
    expect((await ids('staging script'))[0]).toBe(both.id);
    expect((await ids('staging')).sort()).toEqual([both.id, one.id].sort());
    expect(await ids('ERR_42')).toEqual([both.id]);
    // Query syntax and hostile text are plain words: no error, no match beyond the words.
    for (const hostile of [
      '"unclosed',
      'staging OR NOT script',
      "'); drop table memories; --",
      '*',
      'a:b (c',
      '',
    ])
      expect(Array.isArray(await ids(hostile))).toBe(true);
    expect(await ids('nothing-like-this')).toEqual([]);
  });

  it('keeps a memory file’s entries in line with the file, once whoever syncs it', async () => {
    await store.syncFile('/home/MEMORY.md', ['one', 'two']);
    await Promise.all([
      store.syncFile('/home/MEMORY.md', ['two', 'three']),
      other.syncFile('/home/MEMORY.md', ['two', 'three']),
    ]);
    const kept = (await other.list('all')).filter((m) => m.sourceFile === '/home/MEMORY.md');
    expect(kept.map((m) => m.text).sort()).toEqual(['three', 'two']);
    expect(kept.every((m) => m.origin === 'file')).toBe(true);
    await store.syncFile('/home/MEMORY.md', []);
    expect(await other.count('all')).toBe(0);
  });

  it('keeps unicode and a large text whole', async () => {
    const text = `🦊 שלום 漢字 e\u0301 ${'m'.repeat(300_000)}`;
    const m = await store.insert(fact(text));
    expect((await other.get(m.id))?.text).toBe(text);
    expect((await other.keywordSearch('שלום', WS, 5)).map((r) => r.id)).toEqual([m.id]);
  });

  // On purpose (postgres-queries.ts): PostgreSQL's text cannot hold a NUL, so memory drops it there;
  // SQLite keeps the text as given.
  it('keeps a NUL in a memory on SQLite and drops it on PostgreSQL', async () => {
    const m = await store.insert(fact('a\u0000b'));
    expect((await other.get(m.id))?.text).toBe(backend.name === 'SQLite' ? 'a\u0000b' : 'ab');
  });

  describe('proposals', () => {
    let sessionId: string;
    beforeEach(async () => {
      sessionId = (await sessions.create({ workspace: '/ws' })).id;
    });
    const draft = (text: string, workspace: string | null = '/ws') => ({
      kind: 'learning' as const,
      workspace,
      text,
      detail: { evidence: `why ${text}` },
      sessionId,
      messageSeq: 3,
    });

    it('records a session’s reflection once, with its proposals pending oldest first in their view', async () => {
      expect(await other.proposals.reflectedAt(sessionId)).toBeUndefined();
      const made = await store.proposals.recordReflection(sessionId, 'model', [
        draft('first'),
        draft('user-wide', null),
        draft('elsewhere', '/other'),
      ]);
      expect(made?.map((p) => [p.text, p.status, p.memoryId])).toEqual([
        ['first', 'pending', null],
        ['user-wide', 'pending', null],
        ['elsewhere', 'pending', null],
      ]);
      expect(made![0]).toMatchObject({
        detail: { evidence: 'why first' },
        sessionId,
        messageSeq: 3,
        createdAt: T0,
      });
      expect(await other.proposals.reflectedAt(sessionId)).toBe(T0);
      // Twice (two processes ending the same session): the second writes nothing.
      expect(await other.proposals.recordReflection(sessionId, 'model', [draft('again')])).toBeUndefined();
      expect((await other.proposals.pending(WS)).map((p) => p.text)).toEqual(['first', 'user-wide']);
      expect(await other.proposals.pending('all')).toHaveLength(3);
      expect(await other.proposals.get(made![0]!.id)).toEqual(made![0]);
      expect(await other.proposals.get(999_999)).toBeUndefined();
    });

    it('records a reflection with no proposals, so the session is not reflected on again', async () => {
      expect(await store.proposals.recordReflection(sessionId, 'model', [])).toEqual([]);
      expect(await other.proposals.reflectedAt(sessionId)).toBe(T0);
      expect(await other.proposals.recordReflection(sessionId, 'model', [draft('late')])).toBeUndefined();
      expect(await other.proposals.pending('all')).toEqual([]);
    });

    it('records reflections span after span: each over the one read before it, the same span once', async () => {
      expect(
        await store.proposals.recordReflection(sessionId, 'model', [draft('one')], { through: 4 }),
      ).toHaveLength(1);
      expect(await other.proposals.lastReflection(sessionId)).toEqual({ at: T0, through: 4 });
      // A second process that read no reflection before it began: too late.
      expect(
        await other.proposals.recordReflection(sessionId, 'model', [draft('dup')], { through: 4 }),
      ).toBeUndefined();
      time = T0 + 1000;
      const next = await other.proposals.recordReflection(sessionId, 'model', [draft('two')], {
        after: 4,
        through: 9,
      });
      expect(next?.map((p) => p.text)).toEqual(['two']);
      // The span after 4 was written already; its twin from another process writes nothing.
      expect(
        await store.proposals.recordReflection(sessionId, 'model', [draft('twin')], { after: 4, through: 9 }),
      ).toBeUndefined();
      expect(await store.proposals.lastReflection(sessionId)).toEqual({ at: T0 + 1000, through: 9 });
      expect((await store.proposals.pending('all')).map((p) => p.text)).toEqual(['one', 'two']);
    });

    it('accepts a proposal once, storing its memory in the same step; a decided one changes nothing', async () => {
      const [p, q] = (await store.proposals.recordReflection(sessionId, 'model', [
        draft('keep'),
        draft('drop'),
      ]))!;
      await other.proposals.edit(p!.id, 'keep, edited', { evidence: 'new' });
      const decisions = await Promise.all([
        store.proposals.accept(p!.id, fact('keep, edited', '/ws', { origin: 'reflection', sessionId })),
        other.proposals.accept(p!.id, fact('keep, edited', '/ws', { origin: 'reflection', sessionId })),
      ]);
      const memories = decisions.filter((m) => m !== undefined);
      expect(memories).toHaveLength(1);
      expect(memories[0]).toMatchObject({ text: 'keep, edited', origin: 'reflection', sessionId });
      expect(await other.proposals.get(p!.id)).toMatchObject({
        status: 'accepted',
        memoryId: memories[0]!.id,
        text: 'keep, edited',
        detail: { evidence: 'new' },
      });
      expect(await store.proposals.reject(p!.id)).toBe(false);
      expect(await store.proposals.reject(q!.id)).toBe(true);
      expect(await other.proposals.reject(q!.id)).toBe(false);
      expect(await other.proposals.accept(q!.id, fact('drop'))).toBeUndefined();
      expect(await other.proposals.accept(999_999, fact('nothing'))).toBeUndefined();
      expect((await other.list('all')).map((m) => m.text)).toEqual(['keep, edited']);
      expect(await other.proposals.pending('all')).toEqual([]);
    });

    it('keeps unicode and a large evidence in a proposal whole', async () => {
      const text = `🦊 שלום 漢字 ${'q'.repeat(200_000)}`;
      const [p] = (await store.proposals.recordReflection(sessionId, 'model', [
        {
          ...draft(text),
          detail: { evidence: text, skill: { name: 'n', description: text, steps: [text] } },
        },
      ]))!;
      expect(await other.proposals.get(p!.id)).toEqual(p);
      expect(p!.text).toBe(text);
    });

    // Memory drops a NUL on PostgreSQL on purpose (the header); a proposal should do as its memory.
    it('keeps a NUL in a proposal on SQLite and drops it on PostgreSQL, as memory does', async () => {
      const [p] = (await store.proposals.recordReflection(sessionId, 'model', [draft('a\u0000b')]))!;
      expect((await other.proposals.get(p!.id))?.text).toBe(backend.name === 'SQLite' ? 'a\u0000b' : 'ab');
    });
  });
});
