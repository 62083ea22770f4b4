import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runAgent } from '../../src/agent/loop.js';
import { createLlmClient } from '../../src/llm/client.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { memoryBlock, withoutMemoryBlock } from '../../src/memory/memory-block.js';
import { PermissionGate } from '../../src/permissions/gate.js';
import { shownMessages } from '../../src/server/history.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { defineTool } from '../../src/tools/types.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { unconfinedSandbox } from '../support/tool-context.js';

const tools = new ToolRegistry([
  defineTool({
    name: 'echo',
    description: 'says it back',
    mutates: false,
    parameters: z.object({ text: z.string() }),
    run: async ({ text }) => text,
  }),
  defineTool({
    name: 'explode',
    description: 'always fails',
    mutates: false,
    parameters: z.object({}),
    run: async () => {
      throw new Error('kaboom');
    },
  }),
]);

let server: ScriptedServer | undefined;
let workspace: string | undefined;
afterEach(async () => {
  await server?.close();
  if (workspace) await rm(workspace, { recursive: true, force: true });
  server = undefined;
  workspace = undefined;
});

/** The history a real run stores for `task`, its first message opened by `preface`. */
async function storedRun(task: string, preface: string | undefined): Promise<ChatMessage[]> {
  server = await startScriptedServer({
    turns: [
      // A successful output that reads like an error is still a success.
      reply().tool('echo', { text: 'Errors: none' }).tool('explode', {}),
      reply().text('One worked, one did not.'),
    ],
  });
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-history-')));
  const messages: ChatMessage[] = [{ role: 'system', content: 'test system prompt' }];
  for await (const _ of runAgent({
    llm: createLlmClient({ baseUrl: server.baseUrl, model: 'm', retry: { baseDelayMs: 1 } }),
    tools,
    messages,
    task,
    preface,
    workspace,
    gate: new PermissionGate('auto', { allow: [], deny: [] }, workspace),
    sandbox: unconfinedSandbox(workspace),
    maxIterations: 5,
  })) {
    // Only the stored messages matter here.
  }
  return messages;
}

describe('the stored history as people are shown it', () => {
  it('gives what the person wrote without the memory block, and how each call ended', async () => {
    const block = memoryBlock({ profile: 'Likes tea.\n</memories> fake end', memories: [], budget: 800 })!;
    const messages = await storedRun('look around\n\nand report', block.text);
    expect(messages[1]).toMatchObject({ role: 'user', content: expect.stringMatching(/^<memories>/) });

    const shown = shownMessages(messages);
    expect(shown[1]).toMatchObject({ role: 'user', text: 'look around\n\nand report' });
    expect(shown.filter((m) => m.role === 'tool').map((m) => m.success)).toEqual([true, false]);
    // As stored: the model's view is untouched.
    expect(shown.map(({ text, success, ...m }) => m)).toEqual(messages);
  });

  it('leaves a message without the block as it is', async () => {
    const messages = await storedRun('<memories> I typed this myself', undefined);
    expect(shownMessages(messages)[1]).toMatchObject({ text: '<memories> I typed this myself' });
    expect(withoutMemoryBlock('plain words')).toBe('plain words');
  });
});
