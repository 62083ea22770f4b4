import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { cliPath } from '../support/cli.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('mcp-serve');
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

/** `hearth mcp serve` in the test's workspace, driven by the official SDK's client. */
async function connect(...flags: string[]): Promise<Client> {
  const env = Object.fromEntries(
    Object.entries({ PATH: process.env.PATH, ...cli.env() }).filter(
      (e): e is [string, string] => e[1] !== undefined,
    ),
  );
  client = new Client({ name: 'test-editor', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [cliPath, 'mcp', 'serve', '-C', cli.workspace, ...flags],
      env,
      stderr: 'ignore',
    }),
  );
  return client;
}

const text = (result: Awaited<ReturnType<Client['callTool']>>) =>
  (result.content as Array<{ type: string; text: string }>).map((c) => c.text).join('\n');

describe('hearth mcp serve', () => {
  it('lists its tools, reads a file, runs a shell command in the sandbox and a whole task', async () => {
    await writeFile(join(cli.workspace, 'hello.txt'), 'hi from the workspace\n');
    await cli.serve([reply().tool('read_file', { path: 'hello.txt' }), reply().text('The file greets you.')]);
    const mcp = await connect('--allow', 'shell(echo *)');

    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'read_file',
      'list_dir',
      'glob',
      'grep',
      'write_file',
      'edit_file',
      'shell',
      'hearth_task',
    ]);

    const read = await mcp.callTool({ name: 'read_file', arguments: { path: 'hello.txt' } });
    expect(read.isError).toBeFalsy();
    expect(text(read)).toContain('hi from the workspace');

    const shell = await mcp.callTool({
      name: 'shell',
      arguments: { command: 'echo "sandboxed=$HEARTH_SANDBOXED"' },
    });
    expect(text(shell)).toContain('sandboxed=bwrap');

    // Not covered by a rule: nobody can be asked, so it is refused with the rule that would allow it.
    const write = await mcp.callTool({ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } });
    expect(write.isError).toBe(true);
    expect(text(write)).toMatch(/nobody can be asked over MCP.*write_file\(x\.txt\)/s);

    const outside = await mcp.callTool({ name: 'read_file', arguments: { path: '/etc/passwd' } });
    expect(outside.isError).toBe(true);

    const task = await mcp.callTool({ name: 'hearth_task', arguments: { task: 'what does hello.txt say?' } });
    expect(task.isError).toBeFalsy();
    expect(text(task)).toMatch(/^The file greets you\.\n\n\(session [\w-]+\)$/);
    expect(cli.server.requests[0]!.body.messages).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ role: 'user', content: 'what does hello.txt say?' }),
      ]),
    );
  });

  it('exposes only what it is told to', async () => {
    const mcp = await connect('--expose', 'read_file,grep');
    expect((await mcp.listTools()).tools.map((t) => t.name)).toEqual(['read_file', 'grep']);
    const refused = await mcp.callTool({ name: 'shell', arguments: { command: 'id' } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('Unknown tool "shell"');
  });
});
