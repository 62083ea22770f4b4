/**
 * A reply of 50 MB (a model looping on a server that streams it in large pieces) is kept to what
 * one reply may add to the history, the user is told, and the next turn still fits the server's
 * window (a scripted llama.cpp that refuses a longer prompt as the real one does). Slow: 50 MB go
 * through the whole client.
 */
import { afterEach, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { runAgent } from '../../src/agent/loop.js';
import { createLlmClient } from '../../src/llm/client.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { PermissionGate } from '../../src/permissions/gate.js';
import { selectTools } from '../../src/tools/catalog.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { unconfinedSandbox } from '../support/tool-context.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
});

it('keeps a 50 MB reply to its start and end, says so, and the session goes on', async () => {
  const rambling = 'All work and no play makes Jack a dull boy. '.repeat(1_200_000);
  expect(rambling.length).toBeGreaterThan(50_000_000);
  server = await startScriptedServer({
    turns: [
      reply()
        .text(rambling)
        .chunkSize(1 << 20),
      reply().text('Back to work.'),
    ],
    contextLimit: { tokens: 8192, server: 'llamacpp' },
  });
  const llm = createLlmClient({ baseUrl: server.baseUrl, model: 'm', retry: { maxRetries: 0 } });
  const messages: ChatMessage[] = [{ role: 'system', content: 'system prompt' }];
  const run = async (task: string) => {
    const events: AgentEvent[] = [];
    for await (const e of runAgent({
      llm,
      tools: new ToolRegistry(selectTools()),
      messages,
      task,
      workspace: '/',
      gate: new PermissionGate('auto', { allow: [], deny: [] }, '/'),
      sandbox: unconfinedSandbox('/'),
      maxIterations: 5,
      contextWindow: 8192,
    }))
      events.push(e);
    return events;
  };

  const first = await run('say something');
  expect(first.filter((e) => e.type === 'warning')).toEqual([
    {
      type: 'warning',
      message: expect.stringMatching(
        /^The model's reply was 52800000 characters, more than one reply may add to the conversation in this context window \(8601\); \d+ were kept\.$/,
      ),
    },
  ]);
  const kept = messages.at(-1)!;
  expect(kept.role).toBe('assistant');
  // The cap (0.3 of the window, 3.5 characters a token), and the note that says the reply was cut.
  expect((kept.content ?? '').length).toBeLessThan(8601 + 100);
  expect(kept.content).toMatch(/^All work and no play/);
  expect(kept.content).toContain('this reply was cut to fit the context window');

  const second = await run('now something useful');
  expect(second.at(-1)).toMatchObject({ type: 'done', reason: 'completed', text: 'Back to work.' });
  // The server took the next request: no refusal in between.
  expect(server.requests).toHaveLength(2);
}, 120_000);
