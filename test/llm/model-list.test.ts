import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { resolveConnection } from '../../src/llm/connection.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { type Db, openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteMemoryStorage } from '../../src/store/sqlite/memory.js';
import { type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

/**
 * Start-up reads the server's model list once (GET /models): the probe, the check of the model
 * named with -m and memory's choice of an embeddings model all take it from that one answer, so
 * none of them costs another round trip before the first request.
 */
let server: ScriptedServer | undefined;
let dir: string | undefined;
let db: Db | undefined;
afterEach(async () => {
  db?.close();
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  server = undefined;
  dir = undefined;
  db = undefined;
});

const listings = (s: ScriptedServer) =>
  s.allRequests.filter((r) => r.method === 'GET' && r.path === '/v1/models');

describe('the model list at start-up', () => {
  it('is asked once for the probe and the model check, and kept on the connection', async () => {
    server = await startScriptedServer({ models: ['qwen2.5-coder-7b', 'nomic-embed-text'] });
    const connection = await resolveConnection(
      configSchema.parse({ base_url: server.baseUrl, model: 'qwen2.5-coder-7b' }),
    );
    expect(connection.model).toBe('qwen2.5-coder-7b');
    expect(connection.models).toEqual(['qwen2.5-coder-7b', 'nomic-embed-text']);
    expect(listings(server)).toHaveLength(1);
  });

  it('still corrects a nearly right model name from that one answer', async () => {
    server = await startScriptedServer({ models: ['qwen2.5-coder-7b-instruct', 'nomic-embed-text'] });
    const connection = await resolveConnection(
      configSchema.parse({ base_url: server.baseUrl, model: 'coder-7b' }),
    );
    expect(connection.model).toBe('qwen2.5-coder-7b-instruct');
    expect(listings(server)).toHaveLength(1);
  });

  it("gives memory its embeddings model from the connection's list, without asking the server again", async () => {
    server = await startScriptedServer({ models: ['qwen2.5-coder-7b', 'nomic-embed-text'] });
    const connection = await resolveConnection(
      configSchema.parse({ base_url: server.baseUrl, model: 'qwen2.5-coder-7b' }),
    );
    dir = await mkdtemp(join(tmpdir(), 'hearth-model-list-'));
    db = openDatabase(join(dir, 'hearth.db'));
    const memory = await openMemory({
      storage: await SqliteMemoryStorage.open(db),
      config: configSchema.parse({}),
      workspace: dir,
      home: join(dir, 'home'),
      server: connection,
    });
    expect(memory.search.hasEmbedder).toBe(true);
    expect(listings(server)).toHaveLength(1);
    // Without the list (a caller that has none), memory asks the server itself.
    const asked = await openMemory({
      storage: await SqliteMemoryStorage.open(db),
      config: configSchema.parse({}),
      workspace: dir,
      home: join(dir, 'home'),
      server: { baseUrl: server.baseUrl },
    });
    expect(asked.search.hasEmbedder).toBe(true);
    expect(listings(server)).toHaveLength(2);
  });
});
