import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { createClient, resolveConnection } from '../../src/llm/connection.js';
import type { ToolSchema } from '../../src/llm/types.js';
import {
  lmStudioV1Models,
  lmStudioV1Routes,
  ollamaRoutes,
  ollamaShowGemmaVision,
  ollamaShowQwenCoder,
} from '../support/probe-fixtures.js';
import {
  type ExtraRoute,
  reply,
  type ScriptedServer,
  startScriptedServer,
} from '../support/scripted-server.js';

/**
 * A model the server says cannot call tools gets them described in the prompt: Ollama refuses a
 * request with `tools` for such a model ("registry.ollama.ai/library/gemma3:4b does not support
 * tools"), and LM Studio answers in a tool format of its own. The user's `native_tools` wins.
 */
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function connect(
  routes: Record<string, ExtraRoute>,
  models: string[],
  settings: Record<string, unknown> = {},
) {
  server = await startScriptedServer({ extraRoutes: routes, models });
  const config = configSchema.parse({ base_url: server.baseUrl, model: models[0], ...settings });
  return { config, connection: await resolveConnection(config) };
}

const readFile: ToolSchema = {
  type: 'function',
  function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object' } },
};

describe('tools in the prompt when the server says the model has none', () => {
  it('Ollama: a model whose /api/show capabilities lack "tools" gets them in the prompt, said once', async () => {
    const { config, connection } = await connect(ollamaRoutes({ 'gemma3:4b': ollamaShowGemmaVision }), [
      'gemma3:4b',
    ]);
    expect(connection.kind).toBe('ollama');
    expect(connection.nativeTools).toBe(false);
    expect(connection.toolsNote).toBe(
      'gemma3:4b cannot call tools natively (Ollama lists no "tools" capability for it): Hearth describes its tools in the prompt and reads the calls from the text. Set native_tools: true to send them anyway.',
    );
    // The client sends no `tools` then, so Ollama does not refuse the request.
    server!.push(reply().text('Hello.'));
    const events = [];
    for await (const event of createClient(connection, config).stream({
      messages: [{ role: 'user', content: 'hi' }],
      tools: [readFile],
    }))
      events.push(event);
    expect(events.at(-1)).toMatchObject({ type: 'done' });
    expect(server!.requests[0]!.path).toBe('/api/chat');
    expect(server!.requests[0]!.body.tools).toBeUndefined();
  });

  it('Ollama: a model with the "tools" capability keeps native tools, and nothing is said', async () => {
    const { connection } = await connect(ollamaRoutes({ 'qwen2.5-coder:7b': ollamaShowQwenCoder }), [
      'qwen2.5-coder:7b',
    ]);
    expect(connection).toMatchObject({ nativeTools: true });
    expect(connection.toolsNote).toBeUndefined();
  });

  it('LM Studio: a model not trained for tool use (/api/v1/models capabilities) gets them in the prompt', async () => {
    // The shape of docs/developer/rest/list (lmstudio-ai/docs 1_developer/2_rest/list.md), the model
    // marked as not trained for tool use.
    const [entry] = lmStudioV1Models.models;
    const models = {
      models: [{ ...entry, capabilities: { vision: false, trained_for_tool_use: false } }],
    };
    const { connection } = await connect(lmStudioV1Routes(models), [entry!.key]);
    expect(connection.kind).toBe('lmstudio');
    expect(connection.nativeTools).toBe(false);
    expect(connection.toolsNote).toContain('LM Studio says it was not trained for tool use');
  });

  for (const nativeTools of [true, false]) {
    it(`native_tools: ${nativeTools} set by the user wins, and nothing is said`, async () => {
      const { connection } = await connect(
        ollamaRoutes({ 'gemma3:4b': ollamaShowGemmaVision }),
        ['gemma3:4b'],
        { native_tools: nativeTools },
      );
      expect(connection.nativeTools).toBe(nativeTools);
      expect(connection.toolsNote).toBeUndefined();
    });
  }
});
