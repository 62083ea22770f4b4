import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LongTermMemory } from '../../src/memory/memory.js';
import { openPostgres, type PgPool } from '../../src/store/postgres/connection.js';
import { copyMemoryToPostgres, memoryCopier } from '../../src/store/postgres/copy/memory.js';
import { PostgresMemoryStorage } from '../../src/store/postgres/memory.js';
import { SqliteMemoryStorage } from '../../src/store/sqlite/memory.js';
import { SessionStore } from '../../src/store/sqlite/session-store.js';
import { type MemoryRig, memoryRig, NO_POSTGRES, pgTitle, usePostgres } from './support.js';

describe.skipIf(NO_POSTGRES !== undefined)(pgTitle('copying memory from SQLite to PostgreSQL'), () => {
  const server = usePostgres();
  let rig: MemoryRig;
  let pool: PgPool;
  beforeEach(async () => {
    rig = await memoryRig({ 'trigram-a': 64 });
    pool = await openPostgres(await server().database());
  });
  afterEach(async () => {
    await pool.end();
    await rig.close();
  });

  /** Memories, an id gap, vectors, a session link, a NUL, and proposals decided and pending. */
  async function history(memory: LongTermMemory): Promise<string> {
    const session = new SessionStore(rig.db).create({ workspace: rig.workspace, model: 'chat-model' }, [
      { role: 'system', content: 'You are Hearth.' },
    ]).id;
    const remember = (text: string, workspace: string | null = rig.workspace) =>
      memory.remember({ kind: 'fact', workspace, text, origin: 'user', sessionId: session, messageSeq: 2 });
    await remember('The nightly build fails with ERR_SQLITE_4821 when the disk is full.');
    const gone = await remember('A memory forgotten before the copy.');
    await memory.forget(gone.memory.id);
    await remember('Answers in British English.', null);
    await remember('Integration tests need the docker daemon running.');
    await memory.store.insert({
      kind: 'fact',
      workspace: rig.workspace,
      text: 'bell\u0000 character',
      origin: 'user',
    });
    const proposals = memory.store.proposals;
    const [accepted, rejected] = (await proposals.recordReflection(session, 'chat-model', [
      {
        kind: 'learning',
        workspace: rig.workspace,
        text: 'Use npx vitest run.',
        detail: { evidence: 'it hung' },
        sessionId: session,
        messageSeq: 3,
      },
      {
        kind: 'fact',
        workspace: null,
        text: 'The user works in UTC+2.',
        detail: {},
        sessionId: session,
        messageSeq: 4,
      },
      {
        kind: 'fact',
        workspace: rig.workspace,
        text: 'Still waiting for review.',
        detail: {},
        sessionId: session,
        messageSeq: 5,
      },
    ]))!;
    await proposals.accept(accepted!.id, {
      kind: 'learning',
      workspace: rig.workspace,
      text: 'Use npx vitest run.',
      origin: 'reflection',
      sessionId: session,
      messageSeq: 3,
    });
    await proposals.reject(rejected!.id);
    return session;
  }

  it('copies memories, proposals and reflections with their ids, and a second copy changes nothing', async () => {
    const sqlite = await rig.open({ model: 'trigram-a', vectors: 'in-process' });
    const session = await history(sqlite);
    const report = await copyMemoryToPostgres(rig.db, pool);
    expect(report).toEqual([
      { table: 'hearth_memories', copied: 5, skipped: 0 },
      { table: 'hearth_memory_proposals', copied: 3, skipped: 0 },
      { table: 'hearth_reflections', copied: 1, skipped: 0 },
    ]);
    const pg = new PostgresMemoryStorage(pool);
    const before = await sqlite.store.list('all');
    const after = await pg.list('all');
    expect(after).toEqual(before.map((m) => ({ ...m, text: m.text.replaceAll('\u0000', '') })));
    for (const view of ['all', { workspace: rig.workspace }] as const)
      expect(await pg.proposals.pending(view)).toEqual(await sqlite.store.proposals.pending(view));
    const accepted = (await pg.list('all')).find((m) => m.origin === 'reflection')!;
    const decided = await pg.proposals.get(1);
    expect(decided).toMatchObject({ status: 'accepted', memoryId: accepted.id });
    expect(await pg.proposals.reflectedAt(session)).toBe(await sqlite.store.proposals.reflectedAt(session));

    // Searchable there as here: text through PostgreSQL's own index, vectors as copied.
    expect((await pg.keywordSearch('ERR_SQLITE_4821', 'all', 1))[0]?.id).toBe(
      before.find((m) => m.text.includes('4821'))!.id,
    );
    const probe = (await sqlite.search.embedOne('docker integration tests'))!;
    const here = await sqlite.store.nearest(probe.vector, probe.space, 'all', 3);
    const there = await pg.nearest(probe.vector, probe.space, 'all', 3);
    expect(there.map((r) => r.id)).toEqual(here.map((r) => r.id));
    for (const [i, r] of there.entries()) expect(r.score).toBeCloseTo(here[i]!.score, 5);

    // Run again (an interrupted migration resumed): every row once.
    expect(await copyMemoryToPostgres(rig.db, pool)).toEqual([
      { table: 'hearth_memories', copied: 0, skipped: 5 },
      { table: 'hearth_memory_proposals', copied: 0, skipped: 3 },
      { table: 'hearth_reflections', copied: 0, skipped: 1 },
    ]);
    expect(await pg.count('all')).toBe(5);
    expect(await memoryCopier.rest(rig.db, pool)).toBe(0);

    // New rows take ids after the copied ones.
    const added = await pg.insert({
      kind: 'fact',
      workspace: null,
      text: 'Added after the move.',
      origin: 'user',
    });
    expect(added.id).toBeGreaterThan(Math.max(...before.map((m) => m.id)));
    const reflected = await pg.proposals.recordReflection('another-session', 'chat-model', [
      {
        kind: 'fact',
        workspace: null,
        text: 'New proposal.',
        detail: {},
        sessionId: null,
        messageSeq: null,
      },
    ]);
    expect(reflected![0]!.id).toBe(4);
  });

  it('copies nothing from an empty memory, then only what was added since, and leaves the sequences usable', async () => {
    await SqliteMemoryStorage.open(rig.db);
    expect((await copyMemoryToPostgres(rig.db, pool)).map((t) => t.copied)).toEqual([0, 0, 0]);
    await rig.db
      .prepare(
        "INSERT INTO memories (kind, text, origin, created_at, updated_at) VALUES ('fact', 'Late.', 'user', 1, 1)",
      )
      .run();
    expect(await memoryCopier.rest(rig.db, pool)).toBe(1);
    const pg = new PostgresMemoryStorage(pool);
    expect((await pg.insert({ kind: 'fact', workspace: null, text: 'Next.', origin: 'user' })).id).toBe(2);
  });
});
