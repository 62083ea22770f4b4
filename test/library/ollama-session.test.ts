import { randomBytes } from 'node:crypto';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Agent, type AgentEvent, defineTool, z } from '../../src/index.js';
import { ollamaRoutes, ollamaShowQwenCoder } from '../support/probe-fixtures.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

let server: ScriptedServer | undefined;
let dir: string;
let workspace: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-ollama-'));
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-ollama-ws-')));
});
afterEach(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(workspace, { recursive: true, force: true });
});

it('sends one num_ctx, the window it budgets with, on every request of a session, summaries too', async () => {
  const show = { ...ollamaShowQwenCoder, parameters: 'num_ctx 8192' };
  server = await startScriptedServer({
    models: ['qwen2.5-coder:7b'],
    extraRoutes: ollamaRoutes({ 'qwen2.5-coder:7b': show }),
    // The model thinks aloud densely (text no elision can shorten), so after two turns the history
    // passes the threshold and the older turn is summarized.
    turns: [
      reply().text(randomBytes(6000).toString('hex')).tool('dump', {}),
      reply().text(randomBytes(6000).toString('hex')).tool('dump', {}),
      reply().text('Summary: read twice.'),
      reply().text('All done.'),
    ],
  });
  const dump = defineTool({
    name: 'dump',
    description: 'Prints a dump.',
    parameters: z.object({}),
    mutates: false,
    run: async () => 'ok',
  });
  const agent = new Agent({
    baseUrl: server.baseUrl,
    model: 'qwen2.5-coder:7b',
    workspace,
    dbPath: join(dir, 'hearth.db'),
    tools: [dump],
    compactionThreshold: 0.5,
    maxRetries: 0,
  });
  const events: AgentEvent[] = [];
  const result = await agent.run('dump it twice', { onEvent: (e) => events.push(e) });
  await agent.close();

  expect(result.text).toBe('All done.');
  expect(events.filter((e) => e.type === 'compaction').length).toBeGreaterThanOrEqual(1);
  const requests = server.requests;
  expect(requests.every((r) => r.path === '/api/chat')).toBe(true);
  // Summary requests carry no tools; they were sent all the same with the session's num_ctx.
  expect(requests.some((r) => !r.body.tools)).toBe(true);
  expect(new Set(requests.map((r) => r.body.options.num_ctx))).toEqual(new Set([8192]));
  const windows = events.flatMap((e) => (e.type === 'usage' ? [e.contextWindow] : []));
  expect(new Set(windows)).toEqual(new Set([8192]));
});
