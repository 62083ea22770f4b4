import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { runAgent, type SteeringQueue } from '../../src/agent/loop.js';
import { BRIDGE } from '../../src/llm/alternation.js';
import { createLlmClient } from '../../src/llm/client.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { PermissionGate } from '../../src/permissions/gate.js';
import { selectTools } from '../../src/tools/catalog.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';
import { unconfinedSandbox } from '../support/tool-context.js';

/**
 * A command that prints, then waits until the test answers by creating `go`: it can only finish if
 * its first output reached the test while it was still running.
 */
const WAITS_FOR_GO =
  'echo started; for i in $(seq 200); do [ -f go ] && break; sleep 0.05; done; echo finished';

let server: ScriptedServer;
let workspace: string;
beforeEach(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-progress-')));
});
afterEach(async () => {
  await server?.close();
  await rm(workspace, { recursive: true, force: true });
});

class Queue implements SteeringQueue {
  readonly items: string[] = [];
  waiting() {
    return this.items.length > 0;
  }
  take() {
    return this.items.splice(0);
  }
}

async function run(
  turns: TurnInput[],
  onEvent: (event: AgentEvent) => Promise<void> | void,
  steering?: Queue,
) {
  server = await startScriptedServer({ turns });
  const messages: ChatMessage[] = [{ role: 'system', content: 'test' }];
  const events: AgentEvent[] = [];
  for await (const event of runAgent({
    llm: createLlmClient({ baseUrl: server.baseUrl, model: 'm' }),
    tools: new ToolRegistry(selectTools()),
    messages,
    task: 'work',
    workspace,
    gate: new PermissionGate('auto', { allow: [], deny: [] }, workspace),
    sandbox: unconfinedSandbox(workspace),
    maxIterations: 10,
    steering,
  })) {
    events.push(event);
    await onEvent(event);
  }
  return { events, messages };
}

it("reports a slow command's output as progress events before its result; the model sees only the result", async () => {
  const { events, messages } = await run(
    [reply().tool('shell', { command: WAITS_FOR_GO }), reply().text('done')],
    async (event) => {
      if (event.type === 'tool_progress' && event.output.includes('started')) {
        await writeFile(join(workspace, 'go'), '');
      }
    },
  );
  const types = events.map((e) => e.type);
  const firstProgress = types.indexOf('tool_progress');
  expect(firstProgress).toBeGreaterThan(types.indexOf('tool_call'));
  expect(firstProgress).toBeLessThan(types.indexOf('tool_result'));
  const progress = events.filter((e) => e.type === 'tool_progress');
  expect(progress[0]).toMatchObject({ name: 'shell', output: expect.stringContaining('started') });
  // The marker Hearth uses to follow `cd` is not the command's output and never shows.
  expect(progress.map((e) => e.output).join('')).not.toContain('__hearth_cwd');
  const result = events.find((e) => e.type === 'tool_result');
  expect(result).toMatchObject({ ok: true, output: expect.stringContaining('finished') });
  const tool = messages.find((m) => m.role === 'tool');
  expect(tool?.content).toContain('started\nfinished');
});

it('adds a message sent mid-turn to the next request of the same run, skipping calls not yet started', async () => {
  const queue = new Queue();
  const { events } = await run(
    [
      reply()
        .tool('shell', { command: WAITS_FOR_GO })
        .tool('write_file', { path: 'late.txt', content: 'should not be written' }),
      reply().text('ok, switching to Python'),
    ],
    async (event) => {
      if (event.type === 'tool_progress' && event.output.includes('started')) {
        queue.items.push('use Python instead');
        await writeFile(join(workspace, 'go'), '');
      }
    },
    queue,
  );
  expect(server.requests).toHaveLength(2);
  const second = server.requests[1]!.body.messages as ChatMessage[];
  // The calls' results, then (so that roles alternate for strict chat templates) a bridge before the user's words.
  const tail = second.slice(-5).map((m) => m.role);
  expect(tail).toEqual(['assistant', 'tool', 'tool', 'assistant', 'user']);
  expect(second.at(-1)).toEqual({ role: 'user', content: 'use Python instead' });
  expect(second.at(-2)).toEqual({ role: 'assistant', content: BRIDGE });
  expect(second.at(-3)).toMatchObject({
    role: 'tool',
    content: expect.stringContaining('Not run: the user sent'),
  });
  expect(existsSync(join(workspace, 'late.txt'))).toBe(false);
  expect(events.filter((e) => e.type === 'steer')).toEqual([{ type: 'steer', text: 'use Python instead' }]);
  expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'completed', text: 'ok, switching to Python' });
});

it('does not end the run on an answer while a message waits: the model answers that message too', async () => {
  const queue = new Queue();
  const { events } = await run(
    [reply().text('first answer'), reply().text('second answer')],
    (event) => {
      if (event.type === 'turn_start' && event.turn === 1) queue.items.push('and one more thing');
    },
    queue,
  );
  expect(server.requests).toHaveLength(2);
  expect((server.requests[1]!.body.messages as ChatMessage[]).slice(-2)).toEqual([
    { role: 'assistant', content: 'first answer' },
    { role: 'user', content: 'and one more thing' },
  ]);
  expect(events.at(-1)).toMatchObject({ type: 'done', text: 'second answer' });
});
