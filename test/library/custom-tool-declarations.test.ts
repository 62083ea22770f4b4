import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Agent, type AgentOptions, type ApprovalRequest, defineTool, z } from '../../src/index.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';

/**
 * A tool of the user's own whose path argument is called `target`, not `path`: what it touches is
 * its own declaration, and permission rules, approvals and labels follow from that alone.
 */
const publish = defineTool({
  name: 'publish_page',
  description: 'Copy a page into the site folder.',
  parameters: z.object({ target: z.string(), body: z.string() }),
  mutates: true,
  touches: (args) => ({ writes: [args.target] }),
  run: async (args, ctx) => {
    await mkdir(join(ctx.workspace, 'site'), { recursive: true });
    await writeFile(join(ctx.workspace, args.target), args.body);
    return `published ${args.target}`;
  },
});

let server: ScriptedServer;
let dir: string;
let workspace: string;
const agents: Agent[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-decl-'));
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-decl-ws-')));
});
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(workspace, { recursive: true, force: true });
});

async function start(turns: TurnInput[], options: AgentOptions) {
  server = await startScriptedServer({ turns });
  const agent = new Agent({
    baseUrl: server.baseUrl,
    workspace,
    dbPath: join(dir, 'hearth.db'),
    contextWindow: 32_000,
    maxRetries: 0,
    sandbox: 'none',
    tools: ['default', publish],
    ...options,
  });
  agents.push(agent);
  return agent;
}

it("applies path rules and approvals to a custom tool through its declaration, whatever its argument's name", async () => {
  const asked: ApprovalRequest[] = [];
  const agent = await start(
    [
      reply()
        .tool('publish_page', { target: 'site/a.html', body: 'A' })
        .tool('publish_page', { target: 'drafts/b.html', body: 'B' })
        .tool('publish_page', { target: 'site/secret/c.html', body: 'C' }),
      reply().text('done'),
    ],
    {
      allow: ['publish_page(site/**)'],
      deny: ['publish_page(site/secret/**)'],
      approve: (request) => {
        asked.push(request);
        return false;
      },
    },
  );
  const events: string[] = [];
  const result = await agent.run('publish the pages', {
    onEvent: (event) => {
      if (event.type === 'tool_call') events.push(event.label ?? '');
    },
  });
  expect(result.toolCalls.map((c) => [c.ok, c.output])).toEqual([
    [true, 'published site/a.html'],
    [false, 'Not run: the user said no. Do not retry it unchanged; adjust, or ask the user.'],
    [
      false,
      'publish_page was denied by the rule "publish_page(site/secret/**)". Choose another way, or ask the user.',
    ],
  ]);
  // Only the call no rule decided was put to the user, named by the path it would write.
  expect(asked.map((r) => r.summary)).toEqual(['publish_page drafts/b.html']);
  expect(events).toEqual([
    'publish_page site/a.html',
    'publish_page drafts/b.html',
    'publish_page site/secret/c.html',
  ]);
  expect(await readFile(join(workspace, 'site/a.html'), 'utf8')).toBe('A');
});

it('steers a running run from the library: the message reaches the next request', async () => {
  let agent!: Agent;
  agent = await start(
    [
      reply().tool('shell', {
        command: 'echo started; for i in $(seq 200); do [ -f go ] && break; sleep 0.05; done',
      }),
      reply().text('switched'),
    ],
    { permissionMode: 'auto' },
  );
  expect(() => agent.steer('too early')).toThrow(/No run is going/);
  const result = await agent.run('build it', {
    onEvent: (event) => {
      if (event.type === 'tool_progress' && event.output.includes('started')) {
        agent.steer('use make instead');
        void writeFile(join(workspace, 'go'), '');
      }
    },
  });
  expect(result.text).toBe('switched');
  expect(server.requests[1]!.body.messages.at(-1)).toEqual({ role: 'user', content: 'use make instead' });
});
