import { afterEach, describe, expect, it } from 'vitest';
import { discoverServer, pickChatModel, pickLoadedModel } from '../../src/llm/discover.js';
import { closedPort } from '../support/net.js';
import { type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

let servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

describe('server discovery', () => {
  it('uses the first candidate that answers, in order', async () => {
    const a = await startScriptedServer({ models: ['nomic-embed-text', 'qwen2.5-coder-7b'] });
    const b = await startScriptedServer({ models: ['other'] });
    servers.push(a, b);
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const found = await discoverServer([
      { kind: 'lmstudio', baseUrl: dead, startHint: 'start LM Studio' },
      { kind: 'llamacpp', baseUrl: a.baseUrl, startHint: '' },
      { kind: 'vllm', baseUrl: b.baseUrl, startHint: '' },
    ]);
    expect(found).toEqual({
      baseUrl: a.baseUrl,
      kind: 'llamacpp',
      models: ['nomic-embed-text', 'qwen2.5-coder-7b'],
    });
    expect(await pickLoadedModel(found)).toBe('qwen2.5-coder-7b');
  });

  it('says which servers were tried, and offers starting one, pointing at one or pulling a model', async () => {
    const dead1 = `http://127.0.0.1:${await closedPort()}/v1`;
    const dead2 = `http://127.0.0.1:${await closedPort()}/v1`;
    await expect(
      discoverServer([
        { kind: 'lmstudio', baseUrl: dead1, startHint: 'LM Studio: start the server' },
        { kind: 'ollama', baseUrl: dead2, startHint: 'Ollama: ollama serve' },
      ]),
    ).rejects.toThrow(
      new RegExp(
        `${dead1}.*LM Studio: start the server[\\s\\S]*${dead2}.*ollama serve[\\s\\S]*--base-url[\\s\\S]*hearth models pull qwen2.5-coder-1.5b.*then hearth --model .*Nothing is downloaded until you run the pull`,
      ),
    );
  });

  it('prefers the model LM Studio has loaded', async () => {
    const s = await startScriptedServer({
      models: ['a-model', 'b-model'],
      extraRoutes: {
        'GET /api/v0/models': () => ({
          json: {
            data: [
              { id: 'a-model', type: 'llm', state: 'not-loaded' },
              { id: 'embed', type: 'embeddings', state: 'loaded' },
              { id: 'b-model', type: 'llm', state: 'loaded' },
            ],
          },
        }),
      },
    });
    servers.push(s);
    expect(
      await pickLoadedModel({ baseUrl: s.baseUrl, kind: 'lmstudio', models: ['a-model', 'b-model'] }),
    ).toBe('b-model');
  });

  it('skips embedding models when picking a chat model', () => {
    expect(pickChatModel(['text-embedding-nomic', 'llama-3.1-8b'])).toBe('llama-3.1-8b');
    expect(pickChatModel(['bge-embed'])).toBeUndefined();
  });
});
