/**
 * A gateway session runs with the runtime the CLI would build for the same config (src/setup/):
 * workspace skills and MCP servers, over HTTP on 127.0.0.1:0, the scripted model server and a real
 * MCP server from npm.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatMessage } from '../../src/index.js';
import { nodeServer, serverScript } from '../mcp/support.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { reply } from '../support/scripted-server.js';

vi.setConfig({ testTimeout: 60_000 });

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe('a gateway session', () => {
  it('loads a workspace skill and calls an MCP tool, as the CLI would for the same config', async () => {
    gw = await startGateway(
      [
        reply().tool('skill', { name: 'greeting' }),
        reply().tool('tool_search', { query: 'echo' }),
        reply().tool('use_tool', { name: 'mcp__everything__echo', args: { message: 'hi from the gateway' } }),
        reply().text('Greeted.'),
      ],
      {
        config: {
          permissions: { mode: 'auto' },
          mcp: {
            servers: { everything: nodeServer(serverScript('@modelcontextprotocol/server-everything')) },
          },
        },
      },
    );
    const dir = join(gw.workspace, '.hearth', 'skills', 'greeting');
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, 'SKILL.md'),
      '---\nname: greeting\ndescription: Greet someone through the echo tool.\n---\n\nEcho the greeting.\n',
    );

    const chat = await gw.json<{ text: string; reason: string }>('/api/chat/greet', { message: 'Say hi.' });
    expect(chat).toMatchObject({ text: 'Greeted.', reason: 'completed' });
    const first = gw.llm.requests[0]!.body as { messages: ChatMessage[]; tools: unknown };
    expect(first.messages[0]!.content).toContain('- greeting: Greet someone through the echo tool.');
    expect(JSON.stringify(first.tools)).toContain('mcp everything');
    const results = (gw.llm.requests[3]!.body.messages as ChatMessage[]).filter((m) => m.role === 'tool');
    expect(results.map((m) => m.content)).toEqual([
      expect.stringMatching(/^# Skill: greeting\n\nEcho the greeting\./),
      expect.stringContaining('"name":"mcp__everything__echo"'),
      'Echo: hi from the gateway',
    ]);
  });
});
