import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConnection } from '../../src/llm/connection.js';
import { KnownServersFile } from '../../src/llm/known-servers.js';
import { lmStudioOneModel, ollamaRoutes, ollamaShowQwenCoder } from '../support/probe-fixtures.js';
import { type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

let dir: string;
let server: ScriptedServer | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-known-'));
});
afterEach(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

const settings = (baseUrl: string, model: string) => ({
  base_url: baseUrl,
  model,
  timeout: 30,
  idle_timeout: 30,
  max_retries: 0,
  temperature: undefined,
  top_p: undefined,
  seed: undefined,
  native_tools: undefined,
  max_tokens: undefined,
  reasoning: undefined,
  api_key: undefined,
  context_window: undefined,
  first_byte_timeout: undefined,
});

describe('known servers', () => {
  it('asks Ollama only /api/ps the second time, and takes the window it now runs', async () => {
    const loaded: Record<string, number> = {};
    const routes = ollamaRoutes({ 'qwen2.5-coder:7b': ollamaShowQwenCoder }, loaded);
    server = await startScriptedServer({ models: ['qwen2.5-coder:7b'], extraRoutes: routes });
    const known = new KnownServersFile(join(dir, 'servers.json'));
    const s = settings(server.baseUrl, 'qwen2.5-coder:7b') as Parameters<typeof resolveConnection>[0];
    const first = await resolveConnection(s, { known });
    expect(first.kind).toBe('ollama');
    const mark = server.allRequests.length;
    loaded['qwen2.5-coder:7b'] = 16384;
    // A new process reads the file afresh.
    const again = await resolveConnection(s, { known: new KnownServersFile(join(dir, 'servers.json')) });
    expect(server.allRequests.slice(mark).map((r) => r.path)).toEqual(['/api/ps']);
    expect(again.contextWindow).toBe(16384);
    expect(again.contextSource).toMatch(/api\/ps/);
  });

  it('probes in full again when the server no longer answers as it did, and ignores a file it cannot read', async () => {
    const path = join(dir, 'servers.json');
    server = await startScriptedServer({ models: ['qwen3'], extraRoutes: lmStudioOneModel('qwen3', 'llm') });
    const s = settings(server.baseUrl, 'qwen3') as Parameters<typeof resolveConnection>[0];
    expect((await resolveConnection(s, { known: new KnownServersFile(path) })).kind).toBe('lmstudio');
    expect(JSON.parse(await readFile(path, 'utf8'))).toHaveProperty(
      [`${server.baseUrl} qwen3`, 'info', 'kind'],
      'lmstudio',
    );
    // Another server on the same address: LM Studio's endpoint is gone, so the one question fails.
    const port = server.port;
    await server.close();
    server = await startScriptedServer({ port, models: ['qwen3'] });
    const now = await resolveConnection(s, { known: new KnownServersFile(path) });
    expect(now.kind).toBe('openai-compatible');
    expect(server.allRequests.length).toBeGreaterThan(2);
    await writeFile(path, 'not json');
    expect((await resolveConnection(s, { known: new KnownServersFile(path) })).kind).toBe(
      'openai-compatible',
    );
  });
});
