import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../src/agent/loop.js';
import { buildSystemPrompt } from '../../src/agent/system-prompt.js';
import { createLlmClient } from '../../src/llm/client.js';
import { PermissionGate } from '../../src/permissions/gate.js';
import { buildRegistry, selectTools } from '../../src/tools/catalog.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { MemoryState } from '../../src/tools/types.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { unconfinedSandbox } from '../support/tool-context.js';

let server: ScriptedServer;
let workspace: string;
afterEach(async () => {
  await server?.close();
  await rm(workspace, { recursive: true, force: true });
});

/** The exact bytes of the `messages` array inside a recorded request body. */
function messagesBytes(raw: string): string {
  const start = raw.indexOf('"messages":[') + '"messages":'.length;
  let depth = 0;
  let inString = false;
  for (let i = start; i < raw.length; i++) {
    const c = raw[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '[' || c === '{') depth++;
    else if ((c === ']' || c === '}') && --depth === 0) return raw.slice(start, i + 1);
  }
  throw new Error('no messages array');
}

describe('prompt cache friendliness', () => {
  it('makes every request a byte-identical extension of the one before, over 10 steps with todos and a plan changing', async () => {
    workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-prefix-')));
    await writeFile(join(workspace, 'a.txt'), 'alpha\n');
    server = await startScriptedServer({
      turns: [
        reply().tool('todo_write', { todos: [{ text: 'read', status: 'in_progress' }, { text: 'write' }] }),
        reply().tool('plan_update', { steps: ['read a.txt', 'write b.txt', 'check'], current: 1 }),
        reply().text('Reading.').tool('read_file', { path: 'a.txt' }),
        reply().tool('todo_write', {
          todos: [
            { id: '1', status: 'done' },
            { id: '2', status: 'in_progress' },
          ],
          merge: true,
        }),
        reply().tool('plan_update', { current: 2 }),
        reply().tool('write_file', { path: 'b.txt', content: 'beta\n' }),
        reply().tool('task_state_update', { values: { written: 1 } }),
        reply().reasoning('let me check').tool('list_dir', {}),
        reply().tool('todo_write', { todos: [{ id: '2', status: 'done' }], merge: true }),
        reply().text('Done: wrote b.txt.'),
      ],
    });
    const messages = [{ role: 'system' as const, content: buildSystemPrompt({ workspace }) }];
    const events = [];
    for await (const event of runAgent({
      llm: createLlmClient({ baseUrl: server.baseUrl, model: 'm' }),
      tools: new ToolRegistry(selectTools({ enabled: ['default', 'plan', 'task_state'] })),
      messages,
      task: 'copy the idea of a.txt into b.txt',
      workspace,
      gate: new PermissionGate('auto', { allow: [], deny: [] }, workspace),
      sandbox: unconfinedSandbox(workspace),
      durable: new MemoryState(),
      maxIterations: 20,
    })) {
      events.push(event);
    }
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'completed' });
    expect(server.requests).toHaveLength(10);
    const raws = server.requests.map((r) => r.raw);
    for (let i = 1; i < raws.length; i++) {
      const before = messagesBytes(raws[i - 1]!);
      const after = messagesBytes(raws[i]!);
      // Everything but the closing bracket is repeated byte for byte, and something was added.
      expect(after.startsWith(before.slice(0, -1)), `request ${i + 1} rewrites history`).toBe(true);
      expect(after.length).toBeGreaterThan(before.length);
      // The tools and everything else before the messages stay identical too.
      expect(JSON.stringify(server.requests[i]!.body.tools)).toBe(
        JSON.stringify(server.requests[0]!.body.tools),
      );
    }
  });

  it('reaches deferred tools through tool_search and use_tool without changing the tools or the history', async () => {
    workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-prefix-')));
    server = await startScriptedServer({
      turns: [
        reply().tool('tool_search', { query: 'plan' }),
        reply().tool('use_tool', { name: 'plan_update', args: { steps: ['look', 'fix'], current: 1 } }),
        // Called by its own name, as a model may where the server does not hold it to the offered names.
        reply().tool('task_state_update', { values: { looked: true } }),
        reply().tool('use_tool', { name: 'no_such_tool', args: {} }),
        reply().text('Planned.'),
      ],
    });
    const messages = [{ role: 'system' as const, content: buildSystemPrompt({ workspace }) }];
    const durable = new MemoryState();
    const results: Array<{ name: string; ok: boolean; output: string }> = [];
    for await (const event of runAgent({
      llm: createLlmClient({ baseUrl: server.baseUrl, model: 'm' }),
      tools: buildRegistry(),
      messages,
      task: 'plan the fix',
      workspace,
      gate: new PermissionGate('normal', { allow: [], deny: [] }, workspace),
      sandbox: unconfinedSandbox(workspace),
      durable,
      maxIterations: 10,
    })) {
      if (event.type === 'tool_result') results.push(event);
    }
    const offered = (server.requests[0]!.body.tools as Array<{ function: { name: string } }>).map(
      (t) => t.function.name,
    );
    expect(offered).not.toContain('plan_update');
    expect(offered.slice(-2)).toEqual(['tool_search', 'use_tool']);
    expect(results[0]!.output).toContain('{"name":"plan_update"');
    expect(results.slice(1, 3).map((r) => r.ok)).toEqual([true, true]);
    // Results name the tool that ran, whichever way it was called.
    expect(results.map((r) => r.name)).toEqual([
      'tool_search',
      'plan_update',
      'task_state_update',
      'no_such_tool',
    ]);
    expect(durable.get('task_state')).toEqual({ looked: true });
    expect(results[3]).toMatchObject({
      ok: false,
      output: expect.stringMatching(/Unknown tool "no_such_tool".*tool_search/s),
    });
    for (let i = 1; i < server.requests.length; i++) {
      const before = messagesBytes(server.requests[i - 1]!.raw);
      expect(messagesBytes(server.requests[i]!.raw).startsWith(before.slice(0, -1))).toBe(true);
      expect(JSON.stringify(server.requests[i]!.body.tools)).toBe(
        JSON.stringify(server.requests[0]!.body.tools),
      );
    }
  });
});
