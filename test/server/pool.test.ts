import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closedPort } from '../support/net.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

let gw: TestGateway | undefined;
let llm: ScriptedServer | undefined;
afterEach(async () => {
  await gw?.close();
  await llm?.close();
  gw = llm = undefined;
});

describe('the gateway over a pool of servers (llm.endpoints)', () => {
  it('runs turns on a server that answers and shows every server of the pool in /api/status', async () => {
    llm = await startScriptedServer({ models: ['scripted-model'], turns: [reply().text('from the pool')] });
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    gw = await startGateway([], {
      config: {
        base_url: undefined,
        llm: {
          endpoints: [
            { url: dead, priority: 1 },
            { url: llm.baseUrl, priority: 2, max_concurrent: 2 },
          ],
        },
      },
    });
    const answer = await gw.json<{ text: string }>('/api/chat/pooled', { message: 'hello' });
    expect(answer.text).toBe('from the pool');
    expect(gw.llm.requests).toHaveLength(0);
    const status = await gw.json<{ pool: Array<Record<string, unknown>> }>('/api/status');
    expect(status.pool).toEqual([
      expect.objectContaining({ url: dead, priority: 1, state: 'down', lastError: expect.any(String) }),
      expect.objectContaining({ url: llm.baseUrl, priority: 2, state: 'up', maxConcurrent: 2, assigned: 1 }),
    ]);
  });
});
