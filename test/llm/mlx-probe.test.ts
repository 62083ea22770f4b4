import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { createClient, MLX_LM_REPLY_TOKENS, resolveConnection } from '../../src/llm/connection.js';
import { DEFAULT_CONTEXT_WINDOW, probeModel } from '../../src/llm/probe.js';
import {
  llamaCppRoutes,
  mlxLmModels,
  mlxLmRoutes,
  mlxOpenAiServerModels,
  mlxOpenAiServerRoutes,
  omlxModelsWithWindow,
  omlxRoutes,
  vllmRoutes,
} from '../support/probe-fixtures.js';
import {
  type ExtraRoute,
  reply,
  type ScriptedServer,
  startScriptedServer,
} from '../support/scripted-server.js';

/**
 * The MLX servers share their default ports with llama.cpp (8080: mlx_lm.server) and vLLM (8000: oMLX,
 * mlx-openai-server), so discovery's guess by port is checked against the shapes each answers in
 * (test/support/probe-fixtures.ts cites where each shape comes from).
 */
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(routes: Record<string, ExtraRoute>): Promise<ScriptedServer> {
  server = await startScriptedServer({ extraRoutes: routes });
  return server;
}

const mlxLmModel = mlxLmModels.data[0]!.id;

describe('MLX servers', () => {
  for (const kind of [undefined, 'llamacpp'] as const) {
    it(`mlx_lm.server is told apart from llama.cpp on port 8080 (${kind ?? 'no kind'} guessed)`, async () => {
      const s = await serve(mlxLmRoutes());
      const info = await probeModel(s.baseUrl, mlxLmModel, kind ? { kind } : {});
      expect(info).toEqual({
        kind: 'mlx-lm',
        source: 'unknown: mlx_lm.server does not tell its context window',
      });
    });
  }

  it('llama.cpp, which answers /health as mlx_lm.server does, stays llama.cpp', async () => {
    const s = await serve({ ...llamaCppRoutes(), 'GET /health': () => ({ json: { status: 'ok' } }) });
    expect((await probeModel(s.baseUrl, 'whatever', { kind: 'llamacpp' })).kind).toBe('llamacpp');
    expect((await probeModel(s.baseUrl, 'whatever')).kind).toBe('llamacpp');
  });

  it('mlx_lm.server: the window is the default, said, and replies may run past its 512-token default', async () => {
    const s = await serve(mlxLmRoutes());
    const config = configSchema.parse({ base_url: s.baseUrl, model: mlxLmModel });
    const connection = await resolveConnection(config);
    expect(connection).toMatchObject({ kind: 'mlx-lm', contextWindow: DEFAULT_CONTEXT_WINDOW });
    expect(connection.contextNote).toMatch(/could not learn the context window/);
    s.push(reply().text('Hi.'), reply().text('Hi.'));
    for await (const _ of createClient(connection, config).stream({
      messages: [{ role: 'user', content: 'hi' }],
    }));
    expect(s.requests[0]!.body.max_tokens).toBe(MLX_LM_REPLY_TOKENS);
    // max_tokens set by the user wins.
    for await (const _ of createClient(connection, { ...config, max_tokens: 300 }).stream({
      messages: [{ role: 'user', content: 'hi' }],
    }));
    expect(s.requests[1]!.body.max_tokens).toBe(300);
  });

  for (const kind of [undefined, 'vllm'] as const) {
    it(`oMLX: its window from /v1/models/status (${kind ?? 'no kind'} guessed on port 8000)`, async () => {
      const s = await serve(omlxRoutes());
      const info = await probeModel(s.baseUrl, 'Qwen3-8B-4bit', kind ? { kind } : {});
      expect(info).toEqual({
        kind: 'omlx',
        contextWindow: 32_768,
        maxContextWindow: 32_768,
        source: 'oMLX /v1/models/status max_context_window',
      });
    });
  }

  it('oMLX: a release that lists max_model_len is still oMLX, not vLLM', async () => {
    const s = await serve(omlxRoutes(omlxModelsWithWindow));
    for (const kind of [undefined, 'vllm'] as const) {
      const info = await probeModel(s.baseUrl, 'Qwen3-8B-4bit', kind ? { kind } : {});
      expect(info).toEqual({
        kind: 'omlx',
        contextWindow: 40_960,
        maxContextWindow: 40_960,
        source: 'oMLX /v1/models max_model_len',
      });
    }
  });

  for (const kind of [undefined, 'vllm'] as const) {
    it(`mlx-openai-server is told apart from vLLM on port 8000 (${kind ?? 'no kind'} guessed)`, async () => {
      const s = await serve(mlxOpenAiServerRoutes());
      const info = await probeModel(s.baseUrl, mlxOpenAiServerModels.data[0]!.id, kind ? { kind } : {});
      expect(info).toEqual({
        kind: 'mlx-openai-server',
        source: 'unknown: mlx-openai-server does not tell its context window',
      });
    });
  }

  it('vLLM on port 8000 stays vLLM', async () => {
    const s = await serve(vllmRoutes());
    const info = await probeModel(s.baseUrl, 'Qwen/Qwen2.5-7B-Instruct', { kind: 'vllm' });
    expect(info).toMatchObject({ kind: 'vllm', contextWindow: 32768 });
    // vLLM's list says who it is: no question to /health.
    expect(s.allRequests.map((r) => r.path)).not.toContain('/health');
  });
});
