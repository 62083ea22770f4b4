/**
 * Embeddings from a GGUF model run in process, into long-term memory: the generated tiny model
 * (random weights, so the vectors mean nothing; the test checks they are made, stored and used).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { createEmbeddedEmbeddingClient } from '../../../src/llm/embedded/embedding-client.js';
import { importNodeLlamaCpp, isInstalled } from '../../../src/llm/embedded/node-llama-cpp.js';
import { openMemory } from '../../../src/memory/open-memory.js';
import { type Db, openDatabase } from '../../../src/store/sqlite/database.js';
import { SqliteMemoryStorage } from '../../../src/store/sqlite/memory.js';
import { writeTinyLlamaGguf } from '../../support/tiny-gguf.js';

const lib = await importNodeLlamaCpp();
const installed = isInstalled(lib);

describe.skipIf(!installed)('embeddings from an embedded GGUF model', () => {
  let dir: string;
  let modelPath: string;
  let db: Db;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hearth-embed-'));
    modelPath = join(dir, 'tiny.gguf');
    writeTinyLlamaGguf(modelPath);
    db = openDatabase(join(dir, 'hearth.db'));
  });
  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('embeds texts as vectors of the model width', async () => {
    const client = createEmbeddedEmbeddingClient({ modelPath, cpuOnly: true, threads: 1 });
    const result = await client.embed(['the cache lives in redis', 'tests run with vitest']);
    await client.close();
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.vectors.map((v) => v.length)).toEqual([64, 64]);
    expect(result.vectors[0]).not.toEqual(result.vectors[1]);
    expect(client.model).toBe(modelPath);
  });

  it('stores an embedding into memory and searches with it, with no server', async () => {
    const memory = await openMemory({
      storage: await SqliteMemoryStorage.open(db, { vectors: 'in-process' }),
      config: configSchema.parse({ memory: { embedding_model: './tiny.gguf' } }),
      workspace: dir,
      home: join(dir, 'home'),
    });
    const { memory: kept } = await memory.remember({
      kind: 'fact',
      workspace: dir,
      text: 'The build cache lives in redis.',
      origin: 'user',
    });
    expect(kept.embeddingModel).toBe(modelPath);
    const found = await memory.find('where is the build cache', 3);
    expect(found.keywordOnly).toBeUndefined();
    expect(found.hits.map((h) => h.memory.id)).toContain(kept.id);
  });
});

describe.skipIf(installed)('embeddings from an embedded GGUF model', () => {
  it.skip(`skipped: ${'missing' in lib ? lib.missing : ''} (.ci/run installs it)`, () => {});
});
