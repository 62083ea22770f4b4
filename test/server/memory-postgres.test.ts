/**
 * The gateway's memory routes with `storage: postgres://...`: the same routes as over SQLite, the
 * rows in the shared database (and none in the gateway's own session database).
 */

import { afterEach, describe, expect, it } from 'vitest';
import type { PostgresMemoryStorage } from '../../src/store/postgres/memory.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { NO_POSTGRES, pgTitle, usePostgres } from '../memory/support.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { memoryAt } from '../support/storage.js';

describe.skipIf(NO_POSTGRES !== undefined)(pgTitle('memory over the gateway, kept in PostgreSQL'), () => {
  const server = usePostgres();
  let gw: TestGateway | undefined;
  let shared: PostgresMemoryStorage | undefined;
  afterEach(async () => {
    await gw?.close();
    await shared?.close();
    gw = undefined;
    shared = undefined;
  });

  it('adds, searches, reviews and forgets in the shared database', async () => {
    const url = await server().database();
    gw = await startGateway([], { models: ['scripted-model', 'trigram-embed'], config: { storage: url } });
    shared = await memoryAt(url);
    const added = await gw.http('/api/memory', {
      method: 'POST',
      body: JSON.stringify({ text: 'Error E4021 means the cache volume is full.' }),
    });
    expect(added.status).toBe(201);
    const { memory } = (await added.json()) as { memory: { id: number; embedding_model: string | null } };
    expect(memory.embedding_model).toBe('trigram-embed');
    expect((await shared.get(memory.id))?.text).toBe('Error E4021 means the cache volume is full.');

    const found = (await (await gw.http('/api/memory/search?query=E4021')).json()) as {
      memories: Array<{ id: number }>;
      keyword_only: boolean;
    };
    expect(found.memories.map((m) => m.id)).toEqual([memory.id]);
    expect(found.keyword_only).toBe(false);

    // A proposal written by another machine's reflection, reviewed here.
    const [proposal] = (await shared.proposals.recordReflection('elsewhere-1', 'chat-model', [
      {
        kind: 'fact',
        workspace: null,
        text: 'The user works in UTC+2.',
        detail: {},
        sessionId: null,
        messageSeq: null,
      },
    ]))!;
    const listed = (await (await gw.http('/api/memory')).json()) as { pending_proposals: number };
    expect(listed.pending_proposals).toBe(1);
    const accepted = await gw.http(`/api/memory/proposals/${proposal!.id}/accept`, {
      method: 'POST',
      body: '{}',
    });
    expect(accepted.status).toBe(200);
    expect(await shared.proposals.pending('all')).toEqual([]);
    expect((await shared.list('all')).map((m) => m.text)).toContain('The user works in UTC+2.');

    const forgot = await gw.http(`/api/memory/${memory.id}`, { method: 'DELETE' });
    expect(forgot.status).toBe(200);
    expect(await shared.get(memory.id)).toBeUndefined();

    const own = openDatabase(gw.dbPath);
    try {
      expect(own.prepare('SELECT count(*) AS n FROM memories').get()).toEqual({ n: 0 });
    } finally {
      own.close();
    }
  });
});
