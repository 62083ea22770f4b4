import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { ollamaRoutes, ollamaShowGemmaVision } from '../support/probe-fixtures.js';
import { reply } from '../support/scripted-server.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe('what the gateway learns from the model server', () => {
  it('a session on a model the server says cannot call tools describes the tools in its system prompt, sends none natively, and says so once', async () => {
    gw = await startGateway([reply().text('Hello.')], {
      models: ['gemma3:4b'],
      config: { model: 'gemma3:4b' },
      routes: ollamaRoutes({ 'gemma3:4b': ollamaShowGemmaVision }),
    });
    const socket = await gw.socket('/ws/s1');
    socket.send({ type: 'message', content: 'hi' });
    await socket.next((m) => m.type === 'done');
    const events = socket.messages;
    const request = gw.llm.requests[0]!;
    expect(request.path).toBe('/api/chat');
    expect(request.body.tools).toBeUndefined();
    const system = request.body.messages[0];
    expect(system.role).toBe('system');
    expect(system.content).toContain('## Tools');
    expect(system.content).toContain('"name":"read_file"');
    const said = events.filter(
      (e) => e.type === 'warning' && String(e.message).includes('cannot call tools'),
    );
    expect(said).toHaveLength(1);
  });

  it("carries each reply's speed in its usage events", async () => {
    const timings = { cache_n: 1536, prompt_n: 120, prompt_per_second: 479.81, predicted_per_second: 38.49 };
    gw = await startGateway([reply().text('Hello.').finalFields({ timings })]);
    const socket = await gw.socket('/ws/s2');
    socket.send({ type: 'message', content: 'hi' });
    const usage = await socket.next((m) => m.type === 'usage');
    expect(usage.speed).toEqual({
      cached: 1536,
      processed: 120,
      promptTps: 479.8,
      genTps: 38.5,
      firstTokenMs: expect.any(Number),
    });
    await socket.next((m) => m.type === 'done');
  });
});
