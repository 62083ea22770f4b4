/**
 * Which roles' models are swapped, decided once per run: those on LM Studio 0.4 or later (the
 * scripted LM Studio); any other server, probed as Hearth probes servers, is left to load its own
 * models, and that is said once per server, not per task.
 */
import { afterEach, expect, it } from 'vitest';
import { createLlmClient } from '../../src/llm/client.js';
import { setUpSwaps } from '../../src/pipeline/swap-setup.js';
import { type ScriptedLmStudio, startLmStudio } from '../support/lmstudio-server.js';
import { type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

const GB = 1024 ** 3;
const SETTINGS = { mode: 'auto' as const, memory_timeout: 300, load_timeout: 900 };
const MODELS = [
  { key: 'qwen-coder', sizeBytes: 9 * GB },
  { key: 'qwen-reviewer', sizeBytes: 5 * GB },
];
const opened: Array<ScriptedLmStudio | ScriptedServer> = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

async function lmStudio(v0Only = false) {
  const lms = await startLmStudio({ models: MODELS, v0Only, chat: () => ({}) });
  opened.push(lms);
  return lms;
}

const roles = (baseUrl: string, reviewerUrl = baseUrl) => ({
  planner: { model: 'qwen-coder', baseUrl },
  coder: { model: 'qwen-coder', baseUrl },
  reviewer: { model: 'qwen-reviewer', baseUrl: reviewerUrl },
});

it('swaps on LM Studio, and leaves a role on another server to it, saying so once', async () => {
  const lms = await lmStudio();
  const other = await startScriptedServer({ models: ['qwen-reviewer'] });
  opened.push(other);
  const notes: string[] = [];
  const swaps = await setUpSwaps({
    roles: roles(lms.baseUrl, other.baseUrl),
    main: { baseUrl: lms.baseUrl, kind: 'lmstudio', pooled: false },
    settings: SETTINGS,
    note: (m) => notes.push(m),
  });
  expect(notes).toEqual([
    `LM Studio at ${lms.baseUrl}: one role model in memory at a time (planner qwen-coder, coder qwen-coder)`,
    `${other.baseUrl} is openai-compatible, which loads models itself; Hearth swaps role models only with LM Studio`,
  ]);
  expect(await swaps.models?.ready('coder')).toEqual({ ok: true, value: undefined });
  expect(await swaps.models?.ready('reviewer')).toEqual({ ok: true, value: undefined });
  expect(lms.loads).toEqual(['qwen-coder']);
  expect(swaps.models?.drain()).toEqual([{ loaded: 'qwen-coder', unloaded: [], ms: expect.any(Number) }]);
  const reviewer = createLlmClient({ baseUrl: other.baseUrl, model: 'qwen-reviewer' });
  expect(swaps.wrap(reviewer)).toBe(reviewer);
  expect(swaps.wrap(createLlmClient({ baseUrl: lms.baseUrl, model: 'qwen-coder' }))).not.toBe(reviewer);
});

it('does nothing but say so once for a server that is not LM Studio, or an LM Studio before 0.4', async () => {
  const ollama = await startScriptedServer({ models: ['qwen-coder', 'qwen-reviewer'] });
  opened.push(ollama);
  const notes: string[] = [];
  const none = await setUpSwaps({
    roles: roles(ollama.baseUrl),
    main: { baseUrl: ollama.baseUrl, kind: 'ollama', pooled: false },
    settings: SETTINGS,
    note: (m) => notes.push(m),
  });
  expect(none.models).toBeUndefined();
  expect(notes).toEqual([
    `${ollama.baseUrl} is ollama, which loads models itself; Hearth swaps role models only with LM Studio`,
  ]);

  const old = await lmStudio(true);
  notes.length = 0;
  const older = await setUpSwaps({
    roles: roles(old.baseUrl),
    main: { baseUrl: old.baseUrl, kind: 'lmstudio', pooled: false },
    settings: SETTINGS,
    note: (m) => notes.push(m),
  });
  expect(older.models).toBeUndefined();
  expect(notes).toEqual([
    `LM Studio at ${old.baseUrl} is older than 0.4 (no /api/v1/models/load): role models are not swapped`,
  ]);
});

it('asks nothing when swapping is off', async () => {
  const lms = await lmStudio();
  const notes: string[] = [];
  const off = await setUpSwaps({
    roles: roles(lms.baseUrl),
    main: { baseUrl: lms.baseUrl, kind: 'lmstudio', pooled: false },
    settings: { ...SETTINGS, mode: 'off' },
    note: (m) => notes.push(m),
  });
  expect(off.models).toBeUndefined();
  expect(notes).toEqual([]);
  expect(lms.server.allRequests).toHaveLength(0);
});
