/**
 * LM Studio's model management over the scripted LM Studio (test/support/lmstudio-server.ts, whose
 * header cites the shapes): list what is in memory, load, unload; an older LM Studio (only
 * /api/v0/models) can be listed but not swapped; failures come back as values.
 */
import { afterEach, expect, it } from 'vitest';
import { createLmStudioModels } from '../../src/llm/lmstudio-models.js';
import { type ScriptedLmStudio, startLmStudio } from '../support/lmstudio-server.js';
import { closedPort } from '../support/net.js';

const GB = 1024 ** 3;
const models = [
  { key: 'qwen2.5-coder-14b', sizeBytes: 9 * GB },
  { key: 'qwen3-8b', sizeBytes: 5 * GB },
  { key: 'text-embedding-nomic-embed-text-v1.5', sizeBytes: GB / 10, type: 'embedding' as const },
];
let lms: ScriptedLmStudio | undefined;
afterEach(async () => {
  await lms?.close();
  lms = undefined;
});

it('lists what is in memory with sizes, loads and unloads through /api/v1', async () => {
  lms = await startLmStudio({ models, loaded: ['qwen3-8b'], chat: () => ({}) });
  const client = createLmStudioModels({ baseUrl: lms.baseUrl });
  expect(client.origin).toBe(lms.server.url);

  const before = await client.list();
  expect(before).toEqual({
    ok: true,
    value: {
      canSwap: true,
      loaded: [{ key: 'qwen3-8b', instanceId: 'qwen3-8b', type: 'llm', sizeBytes: 5 * GB }],
      sizes: new Map(models.map((m) => [m.key, m.sizeBytes])),
    },
  });
  expect(await client.unload('qwen3-8b')).toEqual({ ok: true, value: undefined });
  expect(await client.load('qwen2.5-coder-14b')).toEqual({
    ok: true,
    value: { instanceId: 'qwen2.5-coder-14b' },
  });
  expect(lms.loaded()).toEqual(['qwen2.5-coder-14b']);
  const after = await client.list();
  expect(after.ok && after.value.loaded.map((m) => m.key)).toEqual(['qwen2.5-coder-14b']);
});

it('says what LM Studio answered when a load or unload fails, and names a server that is not there', async () => {
  lms = await startLmStudio({ models, chat: () => ({}) });
  const client = createLmStudioModels({ baseUrl: lms.baseUrl });
  expect(await client.load('llama-99b')).toEqual({
    ok: false,
    error: 'loading llama-99b: HTTP 404: Model "llama-99b" not found',
  });
  expect(await client.unload('qwen3-8b')).toEqual({
    ok: false,
    error: 'unloading qwen3-8b: HTTP 404: No loaded model instance "qwen3-8b"',
  });
  const gone = createLmStudioModels({ baseUrl: `http://127.0.0.1:${await closedPort()}/v1` });
  const listed = await gone.list();
  expect(listed.ok).toBe(false);
  expect(!listed.ok && listed.error).toMatch(/did not answer/);
});

it('lists an LM Studio older than 0.4 from /api/v0/models, as one that cannot swap', async () => {
  lms = await startLmStudio({ models, loaded: ['qwen3-8b'], v0Only: true, chat: () => ({}) });
  const listed = await createLmStudioModels({ baseUrl: lms.baseUrl }).list();
  expect(listed).toEqual({
    ok: true,
    value: {
      canSwap: false,
      loaded: [{ key: 'qwen3-8b', instanceId: 'qwen3-8b', type: 'llm' }],
      sizes: new Map(),
    },
  });
});
