import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_CONTEXT_WINDOW,
  type ModelInfo,
  probeModel,
  resolveContextWindow,
} from '../../src/llm/probe.js';
import { closedPort } from '../support/net.js';
import {
  llamaCppModels,
  llamaCppProps,
  llamaCppPropsFlat,
  llamaCppRoutes,
  lmStudioModelRoute,
  lmStudioRoutes,
  lmStudioV0Models,
  lmStudioV1Routes,
  ollamaRoutes,
  ollamaShowGemmaVision,
  ollamaShowQwenCoder,
  vllmRoutes,
} from '../support/probe-fixtures.js';
import { type ExtraRoute, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(extraRoutes: Record<string, ExtraRoute>): Promise<ScriptedServer> {
  server = await startScriptedServer({ extraRoutes });
  return server;
}

describe('probeModel: LM Studio', () => {
  it('prefers the loaded context length over the maximum', async () => {
    const s = await serve(lmStudioRoutes());
    const info = await probeModel(s.baseUrl, 'qwen2.5-7b-instruct');
    expect(info).toEqual({
      kind: 'lmstudio',
      contextWindow: 8192,
      maxContextWindow: 32768,
      vision: false,
      tools: true,
      source: 'LM Studio /api/v0/models loaded_context_length',
    });
  });

  it('falls back to the maximum for a model not loaded, and sees vision in a vlm', async () => {
    const s = await serve(lmStudioRoutes());
    const info = await probeModel(s.baseUrl, 'qwen2-vl-7b-instruct', { kind: 'lmstudio' });
    expect(info).toMatchObject({
      kind: 'lmstudio',
      contextWindow: 32768,
      maxContextWindow: 32768,
      vision: true,
    });
    expect(info.source).toMatch(/max_context_length \(model not loaded/);
    expect(info.tools).toBeUndefined();
  });

  it('reads LM Studio 0.4 /api/v1/models when v0 is gone', async () => {
    const s = await serve(lmStudioV1Routes());
    const info = await probeModel(s.baseUrl, 'qwen/qwen3-4b-2507');
    expect(info).toMatchObject({
      kind: 'lmstudio',
      contextWindow: 16384,
      maxContextWindow: 262144,
      vision: false,
      tools: true,
    });
  });

  it('reads the single-model endpoint /api/v0/models/{id}', async () => {
    const entry = { ...lmStudioV0Models.data[0]!, id: 'granite-3.3-8b', loaded_context_length: 12288 };
    const s = await serve({ ...lmStudioRoutes({ object: 'list', data: [] }), ...lmStudioModelRoute(entry) });
    const info = await probeModel(s.baseUrl, 'granite-3.3-8b');
    expect(info).toMatchObject({ kind: 'lmstudio', contextWindow: 12288, maxContextWindow: 32768 });
    expect(info.source).toBe('LM Studio /api/v0/models/granite-3.3-8b loaded_context_length');
  });

  it('names LM Studio but knows no window for a model it does not list', async () => {
    const s = await serve(lmStudioRoutes());
    const info = await probeModel(s.baseUrl, 'nope');
    expect(info.kind).toBe('lmstudio');
    expect(info.contextWindow).toBeUndefined();
    expect(info.source).toMatch(/^unknown: .*does not list nope/);
  });
});

describe('probeModel: Ollama', () => {
  const routes = () =>
    ollamaRoutes({ 'qwen2.5-coder:7b': ollamaShowQwenCoder, 'gemma3:4b': ollamaShowGemmaVision });

  it('uses num_ctx from the Modelfile parameters and reads capabilities', async () => {
    const s = await serve(routes());
    const info = await probeModel(s.baseUrl, 'qwen2.5-coder:7b');
    expect(info).toEqual({
      kind: 'ollama',
      contextWindow: 16384,
      maxContextWindow: 32768,
      vision: false,
      tools: true,
      source: 'Ollama /api/show: num_ctx 16384 in the Modelfile',
    });
    const show = s.allRequests.find((r) => r.path === '/api/show');
    expect(show?.body).toEqual({ model: 'qwen2.5-coder:7b' });
  });

  it('caps a 128K model at a size a small machine can hold', async () => {
    const s = await serve(routes());
    const info = await probeModel(s.baseUrl, 'gemma3:4b', { kind: 'ollama' });
    expect(info).toMatchObject({
      kind: 'ollama',
      contextWindow: 32768,
      maxContextWindow: 131072,
      vision: true,
    });
    expect(info.tools).toBe(false);
    expect(info.source).toBe('Ollama /api/show: model maximum gemma3.context_length 131072, capped at 32768');
  });

  it('keeps the window a model is loaded with (/api/ps), so Ollama does not reload it', async () => {
    const s = await serve(ollamaRoutes({ 'gemma3:4b': ollamaShowGemmaVision }, { 'gemma3:4b': 65536 }));
    const info = await probeModel(s.baseUrl, 'gemma3:4b', { kind: 'ollama' });
    expect(info).toMatchObject({ contextWindow: 65536, maxContextWindow: 131072 });
    expect(info.source).toMatch(/\/api\/ps: loaded with context_length 65536/);
  });

  it('prefers the window the model is loaded with (/api/ps) over the Modelfile num_ctx', async () => {
    // Loaded with more than its Modelfile asks for (another client, or OLLAMA_CONTEXT_LENGTH set
    // before the Modelfile's num_ctx existed): that is the window the server really runs.
    const s = await serve(
      ollamaRoutes({ 'qwen2.5-coder:7b': ollamaShowQwenCoder }, { 'qwen2.5-coder:7b': 32768 }),
    );
    const info = await probeModel(s.baseUrl, 'qwen2.5-coder:7b', { kind: 'ollama' });
    expect(info).toMatchObject({ contextWindow: 32768, maxContextWindow: 32768 });
    expect(info.source).toBe(
      'Ollama /api/ps: loaded with context_length 32768; kept so the model is not reloaded',
    );
  });

  it('finds a model named without its tag in /api/ps, which lists it as name:latest', async () => {
    // `ollama ps` (docs/context-length.mdx) lists `gemma4:latest` for a model pulled as `gemma4`.
    const s = await serve(ollamaRoutes({ gemma3: ollamaShowGemmaVision }, { 'gemma3:latest': 65536 }));
    const info = await probeModel(s.baseUrl, 'gemma3', { kind: 'ollama' });
    expect(info).toMatchObject({ contextWindow: 65536, maxContextWindow: 131072 });
    expect(info.source).toMatch(/\/api\/ps: loaded with context_length 65536/);
  });

  it('keeps the Modelfile num_ctx over a loaded window too small for an agent', async () => {
    const s = await serve(
      ollamaRoutes({ 'qwen2.5-coder:7b': ollamaShowQwenCoder }, { 'qwen2.5-coder:7b': 4096 }),
    );
    const info = await probeModel(s.baseUrl, 'qwen2.5-coder:7b', { kind: 'ollama' });
    expect(info.contextWindow).toBe(16384);
    expect(info.source).toBe(
      'Ollama /api/show: num_ctx 16384 in the Modelfile (loaded with only 4096: Ollama reloads it once)',
    );
  });

  it('asks for more than a window too small for an agent, and says Ollama reloads once', async () => {
    const s = await serve(ollamaRoutes({ 'gemma3:4b': ollamaShowGemmaVision }, { 'gemma3:4b': 4096 }));
    const info = await probeModel(s.baseUrl, 'gemma3:4b', { kind: 'ollama' });
    expect(info.contextWindow).toBe(32768);
    expect(info.source).toMatch(/loaded with only 4096: Ollama reloads it once/);
  });

  it('never exceeds the model maximum, even for a larger loaded window or Modelfile num_ctx', async () => {
    const show = { ...ollamaShowQwenCoder, parameters: 'num_ctx 65536' };
    const s = await serve(ollamaRoutes({ 'qwen2.5-coder:7b': show }, { 'qwen2.5-coder:7b': 65536 }));
    const info = await probeModel(s.baseUrl, 'qwen2.5-coder:7b', { kind: 'ollama' });
    expect(info).toMatchObject({ contextWindow: 32768, maxContextWindow: 32768 });
  });

  it('recognises Ollama by its 404 for a model it does not have', async () => {
    const s = await serve(routes());
    const info = await probeModel(s.baseUrl, 'llama9:70b');
    expect(info).toEqual({
      kind: 'ollama',
      source: "unknown: Ollama /api/show: model 'llama9:70b' not found",
    });
  });
});

describe('probeModel: llama.cpp', () => {
  it('reads the per-slot n_ctx from /props and the trained context from /v1/models', async () => {
    const s = await serve(llamaCppRoutes());
    const info = await probeModel(s.baseUrl, llamaCppModels.data[0]!.id);
    expect(info).toEqual({
      kind: 'llamacpp',
      contextWindow: 16384,
      maxContextWindow: 32768,
      vision: false,
      tools: true,
      slots: 1,
      source: 'llama.cpp /props default_generation_settings.n_ctx',
    });
  });

  it('reads a top-level n_ctx too', async () => {
    const s = await serve(llamaCppRoutes(llamaCppPropsFlat, { object: 'list', data: [] }));
    const info = await probeModel(s.baseUrl, 'whatever', { kind: 'llamacpp' });
    expect(info).toEqual({
      kind: 'llamacpp',
      contextWindow: 4096,
      maxContextWindow: 4096,
      vision: true,
      slots: 1,
      source: 'llama.cpp /props n_ctx',
    });
  });

  it('reads how many slots serve requests at once (total_slots)', async () => {
    const s = await serve(llamaCppRoutes({ ...llamaCppProps, total_slots: 4 }));
    const info = await probeModel(s.baseUrl, llamaCppModels.data[0]!.id, { kind: 'llamacpp' });
    expect(info.slots).toBe(4);
  });

  it('wins over the Ollama-shaped /api/show that llama-server also answers', async () => {
    const fakeShow = {
      model_info: { 'llama.context_length': 16384 },
      capabilities: ['completion'],
      modelfile: '',
      parameters: '',
    };
    const s = await serve({ ...llamaCppRoutes(llamaCppProps), ...ollamaRoutes({ m: fakeShow }) });
    expect((await probeModel(s.baseUrl, 'm')).kind).toBe('llamacpp');
  });
});

describe('probeModel: vLLM', () => {
  it('reads max_model_len for the served model', async () => {
    const s = await serve(vllmRoutes());
    const info = await probeModel(s.baseUrl, 'Qwen/Qwen2.5-7B-Instruct');
    expect(info).toEqual({
      kind: 'vllm',
      contextWindow: 32768,
      maxContextWindow: 32768,
      source: '/v1/models max_model_len',
    });
  });

  it('with the kind given, asks only /v1/models', async () => {
    const s = await serve(vllmRoutes());
    const info = await probeModel(s.baseUrl, 'Qwen/Qwen2.5-7B-Instruct', { kind: 'vllm', apiKey: 'k' });
    expect(info.contextWindow).toBe(32768);
    expect(s.allRequests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/models']);
    expect(s.allRequests[0]!.headers.authorization).toBe('Bearer k');
  });
});

describe('probeModel: unknown servers', () => {
  it('falls back to openai-compatible when no native endpoint answers', async () => {
    const s = await serve({});
    const info = await probeModel(s.baseUrl, 'scripted-model');
    expect(info.kind).toBe('openai-compatible');
    expect(info.contextWindow).toBeUndefined();
    expect(info.source).toMatch(/^unknown: no native endpoint answered/);
  });

  it('does not throw when nothing listens', async () => {
    const info = await probeModel(`http://127.0.0.1:${await closedPort()}/v1`, 'm');
    expect(info).toMatchObject({ kind: 'openai-compatible', source: expect.stringMatching(/^unknown:/) });
  });

  it('gives up on a silent server after the timeout', async () => {
    const silent = createServer(() => {
      // never answers
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      // The server never answers: only the timeout can end the probe.
      const { port } = silent.address() as AddressInfo;
      const info = await probeModel(`http://127.0.0.1:${port}/v1`, 'm', { timeoutMs: 200 });
      expect(info.kind).toBe('openai-compatible');
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('keeps a given kind when its endpoint fails', async () => {
    const s = await serve({});
    const info = await probeModel(s.baseUrl, 'm', { kind: 'ollama' });
    expect(info).toEqual({ kind: 'ollama', source: 'unknown: Ollama /api/show did not answer' });
  });
});

describe('resolveContextWindow', () => {
  const lmstudio: ModelInfo = {
    kind: 'lmstudio',
    contextWindow: 8192,
    maxContextWindow: 32768,
    source: 'LM Studio /api/v0/models loaded_context_length',
  };

  it('lets config win, and says so', () => {
    expect(resolveContextWindow(4096, lmstudio)).toEqual({
      window: 4096,
      source: 'context_window in config',
    });
  });

  it('never budgets past what the server has loaded, whatever the config asks', () => {
    const r = resolveContextWindow(16384, lmstudio);
    expect(r.window).toBe(8192);
    expect(r.note).toMatch(/larger than the 8192 tokens the server reports \(LM Studio.*using 8192/);
  });

  it('lets Ollama go up to the model maximum, and no further', () => {
    const ollama: ModelInfo = { kind: 'ollama', contextWindow: 32768, maxContextWindow: 131072, source: 's' };
    expect(resolveContextWindow(65536, ollama)).toEqual({
      window: 65536,
      source: 'context_window in config',
    });
    const over = resolveContextWindow(200_000, ollama);
    expect(over.window).toBe(131072);
    expect(over.note).toMatch(/131072/);
  });

  it('uses what the server said, naming where it came from', () => {
    expect(resolveContextWindow(undefined, lmstudio)).toEqual({ window: 8192, source: lmstudio.source });
  });

  it('assumes the default with a note when nothing is known', () => {
    const r = resolveContextWindow(undefined, { kind: 'openai-compatible', source: 'unknown: x' });
    expect(r.window).toBe(DEFAULT_CONTEXT_WINDOW);
    expect(r.note).toBe(
      'could not learn the context window from the server; assuming 8192 tokens — set context_window in config',
    );
  });
});

describe('probeModel: a server that names itself in its model list', () => {
  /** The requests the probe made, in order. */
  const asked = (s: ScriptedServer) => s.allRequests.map((q) => `${q.method} ${q.path}`);
  const listOf = (owner: string, ids: string[]) => ({
    object: 'list',
    data: ids.map((id) => ({ id, object: 'model', owned_by: owner })),
  });

  it('asks vLLM nothing but its list, which tells the window', async () => {
    const s = await serve(vllmRoutes());
    const info = await probeModel(s.baseUrl, 'Qwen/Qwen2.5-7B-Instruct');
    expect(info).toMatchObject({ kind: 'vllm' });
    expect(asked(s)).toEqual(['GET /v1/models']);
  });

  it('asks llama.cpp its list, then /props only', async () => {
    const s = await serve(llamaCppRoutes());
    const info = await probeModel(s.baseUrl, 'qwen2.5-coder-7b-instruct-q4_k_m.gguf');
    expect(info).toMatchObject({ kind: 'llamacpp', contextWindow: 16384 });
    expect(asked(s)).toEqual(['GET /v1/models', 'GET /props']);
  });

  it('asks LM Studio ("organization_owner") only its own endpoints after the list', async () => {
    const s = await serve({
      ...lmStudioRoutes(),
      'GET /v1/models': () => ({ json: listOf('organization_owner', ['qwen2.5-7b-instruct']) }),
    });
    const info = await probeModel(s.baseUrl, 'qwen2.5-7b-instruct');
    expect(info).toMatchObject({ kind: 'lmstudio', contextWindow: 8192 });
    expect(asked(s)[0]).toBe('GET /v1/models');
    expect(
      asked(s)
        .slice(1)
        .every((q) => q.includes('/api/v0/') || q.includes('/api/v1/')),
    ).toBe(true);
  });

  it('asks Ollama ("library") only /api/show and /api/ps after the list', async () => {
    const s = await serve({
      ...ollamaRoutes({ 'qwen2.5-coder:7b': ollamaShowQwenCoder }),
      'GET /v1/models': () => ({ json: listOf('library', ['qwen2.5-coder:7b']) }),
    });
    const info = await probeModel(s.baseUrl, 'qwen2.5-coder:7b');
    expect(info).toMatchObject({ kind: 'ollama' });
    expect(asked(s)[0]).toBe('GET /v1/models');
    expect(asked(s).slice(1).sort()).toEqual(['GET /api/ps', 'POST /api/show']);
  });

  it('asks every kind at once when the named kind does not answer as that kind', async () => {
    // Lists like LM Studio, but answers only llama.cpp's /props.
    const s = await serve({
      'GET /props': () => ({ json: llamaCppProps }),
      'GET /v1/models': () => ({ json: listOf('organization_owner', ['m']) }),
    });
    const info = await probeModel(s.baseUrl, 'm');
    expect(info).toMatchObject({ kind: 'llamacpp' });
    expect(asked(s)).toContain('GET /props');
    expect(asked(s)).toContain('POST /api/show');
  });

  it('asks every kind at once after a list that names no server', async () => {
    const s = await serve({ 'GET /props': () => ({ json: llamaCppProps }) });
    const info = await probeModel(s.baseUrl, 'scripted-model');
    expect(info).toMatchObject({ kind: 'llamacpp' });
    expect(asked(s).filter((q) => q === 'GET /v1/models')).toHaveLength(1);
    expect(asked(s)).toContain('GET /api/v0/models');
  });
});
