/**
 * A child reaches the tools behind its parent's index (tool_search, use_tool) as its parent does,
 * and a definition's `tools` narrow that index as they narrow the offered tools: the index never
 * gives a child more than its brief allows.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { nodeServer, openHub, testServer } from '../mcp/support.js';
import { reply } from '../support/scripted-server.js';
import { type Harness, harness, offeredTools, subagentEvents } from './support.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const toolMessages = (request: number) =>
  (h!.server.requests[request]!.body.messages as ChatMessage[]).filter((m) => m.role === 'tool');

it('a child finds a deferred built-in with tool_search and runs it through use_tool', async () => {
  h = await harness({
    turns: [
      reply().tool('delegate', { objective: 'Make the out/deep folder' }),
      reply().tool('tool_search', { query: 'mkdir' }),
      reply().tool('use_tool', { name: 'mkdir', args: { path: 'out/deep' } }),
      reply().tool('report_result', { status: 'done', summary: 'Made out/deep.' }),
      reply().text('The folder is there.'),
    ],
  });
  const { events } = await h.run('Make a folder');
  const child = h.server.requests[1]!;
  // mkdir waits behind the index for the parent, so it does for the child.
  expect(offeredTools(h.server.requests[0]!)).not.toContain('mkdir');
  expect(offeredTools(child)).toContain('tool_search');
  expect(offeredTools(child)).toContain('use_tool');
  expect(offeredTools(child)).not.toContain('mkdir');
  const found = toolMessages(2)[0]!.content as string;
  expect(found).toContain('"name":"mkdir"');
  expect(toolMessages(3)[1]!.content).toMatch(/out\/deep/);
  expect(existsSync(join(h.workspace, 'out/deep'))).toBe(true);
  // What the child asked for stays as it wrote it; people see the real tool.
  const calls = subagentEvents(events).flatMap((e) =>
    e.type === 'subagent_event' && e.event.type === 'tool_call' ? [e.event] : [],
  );
  const used = calls.find((c) => c.call.name === 'use_tool')!;
  expect(used.unwrapped).toEqual({ name: 'mkdir', arguments: '{"path":"out/deep"}' });
});

it("a definition's tools narrow the child's index: what it does not pick stays out of reach", async () => {
  h = await harness({
    files: { '.hearth/agents/historian.md': '---\ntools: [read_file, git]\n---\nRead the history.' },
    turns: [
      reply().tool('delegate', { objective: 'Look at the history', agent: 'historian' }),
      reply().tool('tool_search', { query: 'git branch mkdir' }),
      reply().tool('use_tool', { name: 'mkdir', args: { path: 'planted' } }),
      reply().tool('report_result', { status: 'done', summary: 'Looked.' }),
      reply().text('Done.'),
    ],
  });
  await h.run('History?');
  const child = h.server.requests[1]!;
  expect(offeredTools(child)).toEqual([
    'read_file',
    'git_status',
    'git_diff',
    'git_log',
    'report_result',
    'tool_search',
    'use_tool',
  ]);
  const index = (child.body.tools as Array<{ function: { name: string; description: string } }>).find(
    (t) => t.function.name === 'tool_search',
  )!.function.description;
  expect(index).toContain('git_branch');
  expect(index).not.toContain('mkdir');
  const searched = toolMessages(2)[0]!.content as string;
  expect(searched).toContain('"name":"git_branch"');
  expect(searched).not.toContain('"name":"mkdir"');
  expect(toolMessages(3)[1]!.content).toMatch(/^Error: Unknown tool "mkdir"/);
  expect(existsSync(join(h.workspace, 'planted'))).toBe(false);
});

it("a definition's tools narrow calls by name of an MCP server's tools not listed yet, and such a server stays stopped", async () => {
  const home = await realpath(await mkdtemp(join(tmpdir(), 'hearth-subagents-mcp-')));
  const hub = await openHub({ a: nodeServer(testServer, 'a', '2') }, { userDir: home, workspace: home });
  try {
    h = await harness({
      external: hub,
      files: { '.hearth/agents/reader.md': '---\ntools: [read_file]\n---\nRead files.' },
      turns: [
        reply().tool('delegate', { objective: 'Read what you can', agent: 'reader' }),
        reply().tool('mcp__a__a_tool_0', { id: 'x' }),
        reply().tool('report_result', { status: 'done', summary: 'Read nothing.' }),
        reply().text('Done.'),
      ],
    });
    await h.run('Read');
    expect(toolMessages(2)[0]!.content).toMatch(/^Error: Unknown tool "mcp__a__a_tool_0"/);
    expect(hub.status()[0]).toMatchObject({ running: false, tools: undefined });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});
