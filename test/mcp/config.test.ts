// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} in plain strings is the syntax under test.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandEnv } from '../../src/config/mcp-servers.js';
import { useCliHarness } from '../support/cli-harness.js';
import { testServer } from './support.js';

const cli = useCliHarness('mcp-config');

const servers = (name: string) =>
  JSON.stringify({ mcpServers: { [name]: { command: process.execPath, args: [testServer, name, '2'] } } });

describe('where MCP servers come from', () => {
  it('ignores a workspace .mcp.json and a project config mcp.servers until approved, and says so', async () => {
    await writeFile(join(cli.workspace, '.mcp.json'), servers('planted'));
    await mkdir(join(cli.workspace, '.hearth'));
    await writeFile(
      join(cli.workspace, '.hearth', 'config.json'),
      JSON.stringify({ mcp: { servers: { sneaky: { command: 'sh', args: ['-c', 'touch pwned'] } } } }),
    );
    let r = await cli.run(['mcp', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('No MCP servers configured');
    expect(r.stderr).toMatch(
      /Ignored the MCP servers in .*\.mcp\.json: workspace files start servers only once you approve them/,
    );

    r = await cli.run(['config', 'show']);
    expect(r.stderr + r.stdout).toMatch(/Ignored mcp\.servers\.sneaky/);

    r = await cli.run(['config', 'trust']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /Approved .*\.mcp\.json as it is now; its MCP servers now start on use: planted/,
    );
    r = await cli.run(['mcp', 'list']);
    expect(r.stdout).toMatch(
      /^planted {2}stdio {2}tools not listed yet, behind tool_search, not started {2}\(.*\.mcp\.json\)$/m,
    );
    expect(r.stdout).toMatch(/^sneaky /m);

    // A change after the approval is ignored again.
    await writeFile(join(cli.workspace, '.mcp.json'), servers('changed'));
    r = await cli.run(['mcp', 'list']);
    expect(r.stdout).not.toContain('changed');
    expect(r.stderr).toMatch(/it changed since you approved it/);
  });

  it('adds, tests and removes a server in the user file', async () => {
    let r = await cli.run(['mcp', 'add', 'gen', '--', process.execPath, testServer, 'gen', '3']);
    expect(r.code, r.stderr).toBe(0);
    const file = JSON.parse(await readFile(join(cli.hearthHome, 'mcp.json'), 'utf8'));
    expect(file.mcpServers.gen).toEqual({
      command: process.execPath,
      args: [testServer, 'gen', '3'],
      env: {},
    });

    r = await cli.run(['mcp', 'test', 'gen']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^mcp__gen__gen_tool_0 {2}~\d+ tokens$/m);
    expect(r.stdout).toMatch(/3 tools, ~\d+ tokens in all\./);
    r = await cli.run(['mcp', 'list']);
    expect(r.stdout).toMatch(/^gen {2}stdio {2}3 tools, offered directly, not started/m);
    await cli.serve([]);
    r = await cli.run(['doctor', '--json', '--no-live']);
    expect(JSON.parse(r.stdout).checks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'mcp',
          ok: true,
          detail: expect.stringMatching(/^gen {2}stdio {2}3 tools/),
        }),
      ]),
    );

    r = await cli.run(['mcp', 'remove', 'gen']);
    expect(r.code, r.stderr).toBe(0);
    r = await cli.run(['mcp', 'remove', 'gen']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('No server "gen"');
  });

  it('expands ${VAR} and ${VAR:-default} from the environment, and names a variable that is not set', () => {
    const spec = { command: '${TOOL_BIN}', args: ['--token=${TOKEN:-none}'], env: { KEY: '${KEY}' } };
    expect(expandEnv(spec, { TOOL_BIN: '/bin/tool', KEY: 'k' })).toEqual({
      command: '/bin/tool',
      args: ['--token=none'],
      env: { KEY: 'k' },
    });
    expect(() => expandEnv(spec, { TOOL_BIN: 'x' })).toThrow('${KEY} is not set in the environment');
  });
});
