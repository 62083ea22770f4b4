import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { type CliRun, hearthCommand } from '../support/cli.js';
import { useCliHarness } from '../support/cli-harness.js';
import { gatedServer } from '../support/gated-server.js';
import { descendantsOf } from '../support/processes.js';
import { reply } from '../support/scripted-server.js';
import { waitUntil, withDeadline } from '../support/wait.js';
import { recordUse } from './setup/coverage.js';

/**
 * MCP through the installed bin: a server from npm configured as users configure it (`hearth mcp
 * add`, `mcpServers` in ~/.hearth/mcp.json, `mcp.servers` in the config), found and called in the
 * first session yet started only when used; the other `mcp` commands; and `hearth mcp serve` driven
 * by the official SDK's client. Each case has its own HOME: a first session is one with no listing
 * of the server cached from an earlier one.
 */

const require = createRequire(import.meta.url);
const everythingDir = dirname(require.resolve('@modelcontextprotocol/server-everything/package.json'));
/** Its entry script, as `node /abs/path/dist/index.js` in an `mcpServers` file. */
const everythingScript = join(everythingDir, 'dist', 'index.js');
/** Its bin, as `npm i` links it. */
const everythingBin = join(everythingDir, '..', '..', '.bin', 'mcp-server-everything');

describe('an MCP server from npm through the installed hearth', () => {
  const cli = useCliHarness('acc-mcp');

  /** The server processes the running hearth started (by the bin's name or the package's folder). */
  const servers = (run: CliRun) =>
    descendantsOf(run.child.pid!).filter((p) => p.cmdline.includes('server-everything'));
  const toolResults = (request: number) =>
    (cli.server.requests[request]!.body as { messages: { role: string; content: string }[] }).messages
      .filter((m) => m.role === 'tool')
      .map((m) => m.content);
  const cacheFile = () => join(cli.hearthHome, 'mcp-tools.json');

  it('added with hearth mcp add: started by the first search, not before; the found tool is called and the answer printed; list, test and remove', async () => {
    let r = await cli.run(['mcp', 'add', 'everything', '--', everythingBin]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Added "everything"');
    r = await cli.run(['mcp', 'list']);
    expect(r.stdout).toMatch(
      /^everything {2}stdio {2}tools not listed yet, behind tool_search, not started/m,
    );

    await cli.serve([
      reply().tool('tool_search', { query: 'echo' }).holdAfter(0),
      reply()
        .tool('use_tool', { name: 'mcp__everything__echo', args: { message: 'found in the first session' } })
        .holdAfter(0),
      reply().text('The echo tool answered: found in the first session.'),
    ]);
    const run = cli.start(['--allow', 'mcp__everything__*', 'find an echo tool and try it']);
    await cli.server.waitForHolds(1);
    // The session has begun and asked the model: no server yet, and the index says it is not listed.
    expect(servers(run)).toEqual([]);
    const index = (
      cli.server.requests[0]!.body.tools as { function: { name: string; description: string } }[]
    )
      .map((t) => t.function)
      .find((f) => f.name === 'tool_search');
    expect(index?.description).toContain('mcp everything: (listed on first search)');
    cli.server.release();
    await cli.server.waitForHolds(2);
    const started = servers(run);
    expect(started).toHaveLength(1);
    cli.server.release();
    r = await run.result;
    expect(r.code, r.stderr).toBe(0);
    expect(toolResults(1)[0]).toContain('"name":"mcp__everything__echo"');
    expect(toolResults(2)[1]).toBe('Echo: found in the first session');
    expect(r.stdout).toContain('The echo tool answered: found in the first session.');
    // Stopped with the session.
    await waitUntil(() => !existsSync(`/proc/${started[0]!.pid}`), 'the MCP server to end with hearth');

    r = await cli.run(['mcp', 'test', 'everything']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^mcp__everything__echo {2}~\d+ tokens$/m);
    expect(r.stdout).toMatch(/\d+ tools, ~\d+ tokens in all\./);
    r = await cli.run(['mcp', 'list']);
    expect(r.stdout).toMatch(/^everything {2}stdio {2}\d+ tools, .*, not started/m);

    r = await cli.run(['mcp', 'remove', 'everything']);
    expect(r.code, r.stderr).toBe(0);
    r = await cli.run(['mcp', 'list']);
    expect(r.stdout).toContain('No MCP servers configured');
  });

  it('under mcp.servers in the user config: its tools called by name and through use_tool in the first session, without a search', async () => {
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(
      join(cli.hearthHome, 'config.json'),
      JSON.stringify({ mcp: { servers: { everything: { command: 'node', args: [everythingScript] } } } }),
    );
    await cli.serve([
      reply()
        .tool('mcp__everything__echo', { message: 'hello from the first session' })
        .tool('use_tool', { name: 'mcp__everything__get-sum', args: { a: 2, b: 40 } }),
      reply().text('It echoed, and the sum is 42.'),
    ]);
    const r = await cli.run(['--allow', 'mcp__everything__*', 'echo something and add 2 and 40']);
    expect(r.code, r.stderr).toBe(0);
    const [echoed, sum] = toolResults(1);
    expect(echoed).toBe('Echo: hello from the first session');
    expect(sum).toMatch(/\b42\b/);
    expect(r.stdout).toContain('It echoed, and the sum is 42.');
  });

  it('in mcpServers of ~/.hearth/mcp.json, slower to start than a search waits (npx downloading it): the search says it is still starting, and the next one finds its tools', async () => {
    // The first `npx -y` run downloads the server; this one starts once the test opens its gate.
    const everything = gatedServer(join(cli.home, 'downloaded'), everythingScript);
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(join(cli.hearthHome, 'config.json'), JSON.stringify({ mcp: { startup_timeout: 1 } }));
    await writeFile(
      join(cli.hearthHome, 'mcp.json'),
      JSON.stringify({ mcpServers: { everything: everything.spec } }),
    );
    await cli.serve([
      reply().tool('tool_search', { query: 'echo' }),
      reply().tool('tool_search', { query: 'echo' }).holdAfter(0),
      reply().text('Found it.'),
    ]);
    const run = cli.start(['--yolo', 'find an echo tool']);
    try {
      await cli.server.waitForHolds(1);
      expect(toolResults(1)[0]).toMatch(
        /MCP server "everything" is still starting \(no answer after 1 s; a first start may be downloading it\)/,
      );
      await everything.open();
      await waitUntil(
        () => existsSync(cacheFile()) && readFileSync(cacheFile(), 'utf8').includes('"echo"'),
        'the server to be listed once started',
      );
      cli.server.release();
      const r = await run.result;
      expect(r.code, r.stderr).toBe(0);
      expect(toolResults(2)[1]).toContain('"name":"mcp__everything__echo"');
    } finally {
      // Were the test to fail before the gate opens, the teardown's SIGKILL of hearth would leave
      // the shell waiting on the gate for ever: ended here, while hearth still names it its own.
      for (const p of descendantsOf(run.child.pid!))
        if (p.cmdline.includes(everything.gate)) process.kill(p.pid);
    }
  });
});

describe('hearth mcp serve through the installed bin', () => {
  const cli = useCliHarness('acc-mcp-serve');
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    client = undefined;
  });

  const text = (result: Awaited<ReturnType<Client['callTool']>>) =>
    (result.content as Array<{ type: string; text: string }>).map((c) => c.text).join('\n');

  it('lists its tools and runs them for an MCP client, a whole task among them', async () => {
    await writeFile(join(cli.workspace, 'hello.txt'), 'hi from the workspace\n');
    await cli.serve([reply().text('The file greets you.')]);
    const [command, ...prefix] = hearthCommand();
    const args = ['mcp', 'serve'];
    recordUse({ kind: 'argv', argv: args, terminal: false });
    const env = Object.fromEntries(
      Object.entries({ PATH: process.env.PATH, ...cli.env() }).filter(
        (e): e is [string, string] => e[1] !== undefined,
      ),
    );
    client = new Client({ name: 'acceptance-editor', version: '1.0.0' });
    await withDeadline(
      client.connect(
        new StdioClientTransport({
          command: command!,
          args: [...prefix, ...args],
          cwd: cli.workspace,
          env,
          stderr: 'ignore',
        }),
      ),
      'hearth mcp serve to answer initialize',
    );

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['read_file', 'shell', 'hearth_task']));

    const read = await client.callTool({ name: 'read_file', arguments: { path: 'hello.txt' } });
    expect(read.isError).toBeFalsy();
    expect(text(read)).toContain('hi from the workspace');

    const task = await client.callTool({ name: 'hearth_task', arguments: { task: 'greet me' } });
    expect(task.isError).toBeFalsy();
    expect(text(task)).toMatch(/^The file greets you\.\n\n\(session [\w-]+\)$/);
  });
});
