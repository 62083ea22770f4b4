/**
 * The library Agent with the parts every surface's runtime has (src/setup/): an MCP server from npm,
 * workspace skills, the user's hooks and long-term memory, over the scripted model server, real
 * SQLite and real processes. The `mcpServers` and `hooks` shapes are Claude Code's
 * (https://code.claude.com/docs/en/mcp, https://code.claude.com/docs/en/hooks).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Agent, type AgentEvent, type AgentOptions, type ChatMessage } from '../../src/index.js';
import { nodeServer, serverScript, testServer } from '../mcp/support.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';

vi.setConfig({ testTimeout: 60_000 });

const hookScript = (name: string) => fileURLToPath(new URL(`../fixtures/hooks/${name}`, import.meta.url));

let server: ScriptedServer | undefined;
let home: string;
let workspace: string;
const agents: Agent[] = [];

beforeEach(async () => {
  home = await realpath(await mkdtemp(join(tmpdir(), 'hearth-setup-home-')));
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-setup-ws-')));
});
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
  await server?.close();
  server = undefined;
  await rm(home, { recursive: true, force: true });
  await rm(workspace, { recursive: true, force: true });
});

async function serve(...turns: TurnInput[]) {
  server = await startScriptedServer({ turns });
  return server;
}

function agent(options: AgentOptions = {}): Agent {
  const made = new Agent({
    baseUrl: server!.baseUrl,
    workspace,
    home,
    sandbox: 'none',
    contextWindow: 32_000,
    maxRetries: 0,
    ...options,
  });
  agents.push(made);
  return made;
}

const sent = (n: number) => server!.requests[n]!.body.messages as ChatMessage[];
const toolText = (n: number) => sent(n).flatMap((m) => (m.role === 'tool' ? [m.content as string] : []));
const everythingScript = serverScript('@modelcontextprotocol/server-everything');
const everything = () => nodeServer(everythingScript);

describe('the library Agent, assembled like the CLI', () => {
  it('calls a tool of an MCP server given in the mcpServers shape', async () => {
    await serve(
      reply().tool('tool_search', { query: 'echo' }),
      reply().tool('use_tool', { name: 'mcp__everything__echo', args: { message: 'from the library' } }),
      reply().text('It echoed.'),
    );
    const result = await agent({
      permissionMode: 'auto',
      // As an mcp.json file writes it: no env, no type.
      mcpServers: { everything: { command: process.execPath, args: [everythingScript] } },
    }).run('echo something');
    expect(result.reason).toBe('completed');
    // A call through use_tool is reported as the tool it named, with that tool's own arguments.
    expect(result.toolCalls.map((c) => [c.call.name, c.ok])).toEqual([
      ['tool_search', true],
      ['mcp__everything__echo', true],
    ]);
    expect(JSON.parse(result.toolCalls[1]!.call.arguments)).toEqual({ message: 'from the library' });
    expect(result.toolCalls[1]!.output).toBe('Echo: from the library');
    expect(toolText(2).at(-1)).toBe('Echo: from the library');
  });

  it("does not let the workspace add MCP servers or hooks to the library user's own", async () => {
    const marker = join(home, 'workspace-hook-ran');
    await writeFile(
      join(workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { planted: nodeServer(testServer) } }),
    );
    await mkdir(join(workspace, '.hearth'));
    await writeFile(
      join(workspace, '.hearth', 'config.json'),
      JSON.stringify({
        hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: `touch ${marker}` }] }] },
      }),
    );
    await serve(reply().tool('list_dir', { path: '.' }), reply().text('Listed.'));
    const events: AgentEvent[] = [];
    await agent({ mcpServers: { everything: everything() } }).run('list the files', {
      onEvent: (event) => events.push(event),
    });
    const warnings = events.flatMap((e) => (e.type === 'warning' ? [e.message] : []));
    expect(warnings).toContainEqual(
      expect.stringContaining(`Ignored the MCP servers in ${join(workspace, '.mcp.json')}`),
    );
    const index = JSON.stringify(server!.requests[0]!.body.tools);
    expect(index).toContain('mcp everything');
    expect(index).not.toContain('planted');
    expect(existsSync(marker)).toBe(false);
  });

  it('loads a workspace skill with the skill tool, its body reaching the next request', async () => {
    const dir = join(workspace, '.hearth', 'skills', 'release-notes');
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, 'SKILL.md'),
      '---\nname: release-notes\ndescription: Write release notes from the git log.\n---\n\nGroup commits by type.\n',
    );
    await serve(reply().tool('skill', { name: 'release-notes' }), reply().text('Notes written.'));
    const result = await agent().run('write the release notes');
    expect(sent(0)[0]!.content).toContain('- release-notes: Write release notes from the git log.');
    expect(sent(0)[0]!.content).not.toContain('Group commits by type');
    expect(result.toolCalls[0]).toMatchObject({ call: { name: 'skill' }, ok: true });
    expect(toolText(1)[0]).toMatch(/^# Skill: release-notes\n\nGroup commits by type\./);

    await server!.close();
    await serve(reply().text('No skills.'));
    await agent({ skills: false }).run('write the release notes');
    expect(sent(0)[0]!.content).not.toContain('release-notes');
  });

  it("runs the user's PreToolUse hook, which blocks a call with its reason", async () => {
    await writeFile(join(workspace, 'keep.txt'), 'kept\n');
    await serve(reply().tool('shell', { command: 'rm -rf keep.txt' }), reply().text('Blocked, then.'));
    const result = await agent({
      permissionMode: 'auto',
      hooks: {
        PreToolUse: [
          { matcher: 'Bash', hooks: [{ type: 'command', command: hookScript('block-rm-rf.sh') }] },
        ],
      },
    }).run('clean up');
    expect(result.toolCalls[0]).toMatchObject({ call: { name: 'shell' }, ok: false });
    expect(result.toolCalls[0]!.output).toContain("Blocked: 'rm -rf' is not allowed here.");
    expect(existsSync(join(workspace, 'keep.txt'))).toBe(true);
  });

  it("remembers in one Agent; the next Agent's first request carries the memory block", async () => {
    await serve(
      reply().tool('remember', { text: 'Deploys to staging run make deploy-staging.', kind: 'fact' }),
      reply().text('Noted.'),
    );
    const first = agent({ tools: ['default', 'memory'], permissionMode: 'auto' });
    const kept = await first.run('Remember how we deploy to staging.');
    expect(kept.toolCalls[0]).toMatchObject({
      ok: true,
      output: expect.stringMatching(/^Remembered as #\d+/),
    });
    await first.close();
    await server!.close();

    await serve(reply().text('Run make deploy-staging.'));
    await agent().run('How do we deploy to staging?');
    const opening = sent(0)[1]!.content as string;
    expect(sent(0)).toHaveLength(2);
    expect(opening).toMatch(/^<memories>\n/);
    expect(opening).toMatch(/- #\d+ \(fact\) Deploys to staging run make deploy-staging\./);
    expect(opening).toMatch(/<\/memories>\n\nHow do we deploy to staging\?$/);

    await server!.close();
    await serve(reply().text('No idea.'));
    await agent({ memory: false }).run('How do we deploy to staging?');
    expect(sent(0)[1]!.content).toBe('How do we deploy to staging?');
  });

  it('rejects bad MCP, hook, memory and sub-agent options when made, naming the option', () => {
    const bad = (options: AgentOptions) => () => new Agent(options);
    expect(bad({ mcpServers: { ok: { type: 'http' } as never } })).toThrow(/mcpServers\.ok/);
    expect(
      bad({ hooks: { PreToolUse: [{ hooks: [{ type: 'http' as 'command', command: 'x' }] }] } }),
    ).toThrow(/hooks\.PreToolUse\.0\.hooks\.0\.type: expected one of command/);
    expect(bad({ memory: { budget: -1 } })).toThrow(/memory\.budget/);
    expect(bad({ subagents: { maxDepth: 99 } })).toThrow(/subagents\.maxDepth/);
    // Groups that exist once skills and sub-agents are set up are known names already.
    expect(bad({ tools: ['default', 'subagents', 'promote_tool'] })).not.toThrow();
  });
});
