/**
 * One model in memory at a time, over the scripted LM Studio (test/support/lmstudio-server.ts):
 * real HTTP clients whose requests hold their model while they stream, a swap that waits for the
 * request in flight, the memory gate between unload and load (an injected memory port and a manual
 * clock), and the swaps recorded for the report.
 */
import { afterEach, expect, it } from 'vitest';
import { createLlmClient, type LlmClient } from '../../src/llm/client.js';
import { createLmStudioModels } from '../../src/llm/lmstudio-models.js';
import type { LlmEvent } from '../../src/llm/types.js';
import { leasedClient, ModelSwapper } from '../../src/pipeline/model-swap.js';
import type { MemoryPort } from '../../src/util/memory.js';
import { type ScriptedLmStudio, startLmStudio } from '../support/lmstudio-server.js';
import { ManualClock } from '../support/manual-clock.js';

const GB = 1024 ** 3;
const MODELS = [
  { key: 'coder', sizeBytes: 9 * GB },
  { key: 'reviewer', sizeBytes: 5 * GB },
  { key: 'nomic-embed', sizeBytes: GB / 10, type: 'embedding' as const },
];
const said = (text: string) => ({
  id: 'c',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
});

let lms: ScriptedLmStudio | undefined;
afterEach(async () => {
  await lms?.close();
  lms = undefined;
});

async function last(llm: LlmClient): Promise<LlmEvent> {
  let end: LlmEvent | undefined;
  for await (const event of llm.stream({ messages: [{ role: 'user', content: 'hi' }] })) end = event;
  return end!;
}

const client = (baseUrl: string, model: string) =>
  createLlmClient({ baseUrl, model, retry: { maxRetries: 0 } });

it('a request for another model waits for the one in flight: nothing is unloaded under it', async () => {
  let release!: () => void;
  let arrived!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const coderArrived = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  lms = await startLmStudio({
    models: MODELS,
    chat: async (body) => {
      if (body.model === 'coder') {
        arrived();
        await held;
      }
      return said(`${body.model} here`);
    },
  });
  const swapper = new ModelSwapper({ models: createLmStudioModels({ baseUrl: lms.baseUrl }) });
  const coder = leasedClient(client(lms.baseUrl, 'coder'), swapper);
  const reviewer = leasedClient(client(lms.baseUrl, 'reviewer'), swapper);

  const coding = last(coder);
  await coderArrived;
  const reviewing = last(reviewer);
  // The reviewer's swap is queued behind the coder's request: a second coder request waits too.
  const again = last(coder);
  release();
  expect(await coding).toMatchObject({ type: 'done', message: { content: 'coder here' } });
  expect(await reviewing).toMatchObject({ type: 'done', message: { content: 'reviewer here' } });
  expect(await again).toMatchObject({ type: 'done', message: { content: 'coder here' } });
  expect(lms.overlaps).toEqual([]);
  expect(lms.loads).toEqual(['coder', 'reviewer', 'coder']);
  expect(lms.unloads).toEqual(['coder', 'reviewer']);
  expect(swapper.drain()).toEqual([
    { loaded: 'coder', unloaded: [], ms: expect.any(Number) },
    { loaded: 'reviewer', unloaded: ['coder'], ms: expect.any(Number) },
    { loaded: 'coder', unloaded: ['reviewer'], ms: expect.any(Number) },
  ]);
  expect(swapper.drain()).toEqual([]);
});

it('the scripted LM Studio refuses a model that is not in memory, as LM Studio does without JIT loading', async () => {
  lms = await startLmStudio({ models: MODELS, chat: () => said('?') });
  const bare = await last(client(lms.baseUrl, 'coder'));
  expect(bare).toMatchObject({ type: 'error', error: { kind: 'http', status: 400 } });
  expect(bare.type === 'error' && bare.error.message).toContain('No models loaded');
});

it('loads a model again that LM Studio dropped behind its back, and sends the request once more', async () => {
  lms = await startLmStudio({ models: MODELS, chat: (body) => said(`${body.model} here`) });
  const models = createLmStudioModels({ baseUrl: lms.baseUrl });
  const swapper = new ModelSwapper({ models });
  const coder = leasedClient(client(lms.baseUrl, 'coder'), swapper);
  expect(await last(coder)).toMatchObject({ type: 'done' });
  // LM Studio's idle TTL (or a person in its UI) unloads the model.
  expect(await models.unload('coder')).toEqual({ ok: true, value: undefined });
  expect(await last(coder)).toMatchObject({ type: 'done', message: { content: 'coder here' } });
  expect(lms.loads).toEqual(['coder', 'coder']);
  expect(lms.server.requests.map((r) => r.body.model)).toEqual(['coder', 'coder', 'coder']);
});

it('keeps a model already in memory and embedding models, and unloads the other LLMs', async () => {
  lms = await startLmStudio({
    models: [...MODELS, { key: 'user-chat', sizeBytes: 4 * GB }],
    loaded: ['reviewer', 'user-chat', 'nomic-embed'],
    chat: () => said('ok'),
  });
  const swapper = new ModelSwapper({ models: createLmStudioModels({ baseUrl: lms.baseUrl }) });
  expect(await swapper.ensure('reviewer')).toEqual({ ok: true, value: undefined });
  expect(lms.loads).toEqual([]);
  expect(lms.loaded().sort()).toEqual(['nomic-embed', 'reviewer']);
  expect(swapper.drain()).toEqual([{ unloaded: ['user-chat'], ms: expect.any(Number) }]);
  // Known to be in memory now: no listing, no swap.
  const calls = lms.server.allRequests.length;
  expect(await swapper.ensure('reviewer')).toEqual({ ok: true, value: undefined });
  expect(lms.server.allRequests.length).toBe(calls);
});

it('after unloading, loads only once the memory gate sees the memory back', async () => {
  lms = await startLmStudio({ models: MODELS, loaded: ['reviewer'], chat: () => said('ok') });
  const server = lms;
  // The OS hands the unloaded model's memory back two looks late.
  let looks = 0;
  const memory: MemoryPort = {
    available: () => (++looks < 3 ? 2 * GB : 16 * GB - server.inUse()),
    total: () => 16 * GB,
  };
  const clock = new ManualClock();
  const swapper = new ModelSwapper({
    models: createLmStudioModels({ baseUrl: lms.baseUrl }),
    memory: { port: memory, timeoutMs: 60_000 },
    clock,
  });
  const swapping = swapper.ensure('coder');
  await clock.elapse(1000);
  expect(lms.unloads).toEqual(['reviewer']);
  expect(lms.loads).toEqual([]);
  await clock.elapse(1000);
  expect(await swapping).toEqual({ ok: true, value: undefined });
  expect(lms.loads).toEqual(['coder']);
  expect(looks).toBe(3);
  expect(swapper.drain()).toEqual([{ loaded: 'coder', unloaded: ['reviewer'], ms: 2000 }]);
});

it('a memory gate that times out ends the swap with its reason, and a request with an error event', async () => {
  lms = await startLmStudio({ models: MODELS, loaded: ['reviewer'], chat: () => said('ok') });
  const swapper = new ModelSwapper({
    models: createLmStudioModels({ baseUrl: lms.baseUrl }),
    memory: { port: { available: () => GB, total: () => 16 * GB }, minBytes: 12 * GB, timeoutMs: 0 },
  });
  const end = await last(leasedClient(client(lms.baseUrl, 'coder'), swapper));
  expect(end).toEqual({
    type: 'error',
    error: {
      kind: 'network',
      message:
        'the model coder could not be put in memory: memory did not free up: 1.0 GB available after 0 s, 12.0 GB wanted before the next model loads (pipeline.swap.min_free_gb, pipeline.swap.memory_timeout)',
    },
  });
  expect(lms.loads).toEqual([]);
  expect(lms.server.requests).toHaveLength(0);
});
