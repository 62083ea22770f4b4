import { execFile } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  Agent,
  AgentError,
  type AgentEvent,
  type AgentOptions,
  type AgentResult,
  type ApprovalRequest,
  type ChatMessage,
  ConfigError,
  defineTool,
  RuleSyntaxError,
  ToolSelectionError,
  z,
} from '../../src/index.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SessionStore } from '../../src/store/sqlite/session-store.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';

const exec = promisify(execFile);
const indexModule = new URL('../../src/index.ts', import.meta.url).pathname;

let server: ScriptedServer | undefined;
let dir: string;
let workspace: string;
const agents: Agent[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-lib-'));
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-lib-ws-')));
});
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
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
    dbPath: join(dir, 'hearth.db'),
    home: dir,
    contextWindow: 32_000,
    maxRetries: 0,
    ...options,
  });
  agents.push(made);
  return made;
}

const sent = (n: number) => server!.requests[n]!.body.messages as ChatMessage[];
const toolMessages = (n: number) => sent(n).flatMap((m) => (m.role === 'tool' ? [m.content] : []));

describe('Agent.run', () => {
  it('returns the answer, the calls made, usage and the stored session', async () => {
    await serve(
      reply().text('Writing it.').tool('write_file', { path: 'out.txt', content: 'hello\n' }),
      reply().text('Wrote out.txt.'),
    );
    const hearth = agent({ permissionMode: 'auto' });
    expect(hearth.sessionId).toBeUndefined();
    const result = await hearth.run('write hello to out.txt');

    expect(result).toMatchObject({
      text: 'Wrote out.txt.',
      reason: 'completed',
      turns: 2,
      paused: false,
      pending: [],
      toolCalls: [
        { call: { name: 'write_file' }, ok: true, output: expect.stringMatching(/^Created out\.txt/) },
      ],
    });
    expect(JSON.parse(result.toolCalls[0]!.call.arguments)).toEqual({ path: 'out.txt', content: 'hello\n' });
    expect(result.usage.prompt).toBeGreaterThan(0);
    expect(result.usage.completion).toBeGreaterThan(0);
    expect(await readFile(join(workspace, 'out.txt'), 'utf8')).toBe('hello\n');

    expect(result.sessionId).toBe(hearth.sessionId);
    const store = new SessionStore(openDatabase(join(dir, 'hearth.db')));
    expect(store.get(result.sessionId)).toMatchObject({
      status: 'completed',
      workspace,
      model: 'scripted-model',
    });
  });

  it('continues the same conversation on the next run', async () => {
    await serve(reply().text('First.'), reply().text('Second.'));
    const hearth = agent({ instructions: 'Answer in one word.' });
    await hearth.run('one');
    const second = await hearth.run('two');
    expect(second.text).toBe('Second.');
    expect(sent(1).map((m) => [m.role, m.content])).toEqual([
      ['system', expect.stringMatching(/## Instructions\nAnswer in one word\.$/)],
      ['user', 'one'],
      ['assistant', 'First.'],
      ['user', 'two'],
    ]);
    // The system prompt is byte-identical across requests: the server's prompt cache stays valid.
    expect(sent(1)[0]).toEqual(sent(0)[0]);
  });
});

describe('Agent.stream', () => {
  it('yields the events of the run, ending with done', async () => {
    await serve(reply().tool('list_dir', { path: '.' }), reply().text('An empty folder.'));
    const events: AgentEvent[] = [];
    for await (const event of agent().stream('what is here?')) events.push(event);

    const types = events.map((e) => e.type).filter((t, i, all) => t !== all[i - 1]);
    expect(types).toEqual([
      'session',
      'turn_start',
      'usage',
      'tool_call',
      'tool_result',
      'turn_start',
      'text_delta',
      'usage',
      'done',
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'completed', text: 'An empty folder.' });
  });

  it('reports a missing context window once, as a warning before the first turn', async () => {
    await serve(reply().text('a'), reply().text('b'));
    const hearth = agent({ contextWindow: undefined });
    const first: AgentEvent[] = [];
    for await (const event of hearth.stream('x')) first.push(event);
    expect(first[0]).toMatchObject({ type: 'warning', message: expect.stringMatching(/context window/) });
    const second: AgentEvent[] = [];
    for await (const event of hearth.stream('y')) second.push(event);
    expect(second.some((e) => e.type === 'warning')).toBe(false);
  });
});

describe('custom tools', () => {
  it('sends the schema of a defineTool tool and runs it with validated arguments', async () => {
    const seen: unknown[] = [];
    const lookup = defineTool({
      name: 'lookup_order',
      description: 'Status of an order by number.',
      parameters: z.object({ order: z.number().int().describe('the order number') }),
      mutates: false,
      async run({ order }, ctx) {
        seen.push({ order, workspace: ctx.workspace });
        return order === 1042 ? 'shipped on 3 March' : `no order ${order}`;
      },
    });
    await serve(reply().tool('lookup_order', { order: 1042 }), reply().text('It shipped on 3 March.'));
    const result = await agent({ tools: ['read_file', lookup] }).run('where is order 1042?');

    const tools = server!.requests[0]!.body.tools as Array<{
      function: { name: string; parameters: object };
    }>;
    // The built-in tools not named stay reachable behind the index.
    expect(tools.map((t) => t.function.name)).toEqual([
      'read_file',
      'lookup_order',
      'tool_search',
      'use_tool',
    ]);
    expect(tools[1]!.function.parameters).toMatchObject({
      type: 'object',
      properties: { order: { type: 'integer', description: 'the order number' } },
      required: ['order'],
    });
    expect(seen).toEqual([{ order: 1042, workspace }]);
    expect(toolMessages(1)).toEqual(['shipped on 3 March']);
    expect(result.text).toBe('It shipped on 3 March.');
  });

  it('adds custom tools to the default set when no names are given', async () => {
    const ping = defineTool({
      name: 'ping',
      description: 'Answers pong.',
      parameters: z.object({}),
      mutates: false,
      run: async () => 'pong',
    });
    await serve(reply().text('ok'));
    await agent({ tools: [ping] }).run('x');
    const names = (server!.requests[0]!.body.tools as Array<{ function: { name: string } }>).map(
      (t) => t.function.name,
    );
    expect(names).toContain('write_file');
    expect(names.slice(-3)).toEqual(['ping', 'tool_search', 'use_tool']);
  });
});

describe('custom tools named like built-in ones', () => {
  it('replaces the built-in tool: its schema is sent and it runs', async () => {
    const reads: string[] = [];
    const myRead = defineTool({
      name: 'read_file',
      description: 'Reads from the company wiki.',
      parameters: z.object({ page: z.string() }),
      mutates: false,
      async run({ page }) {
        reads.push(page);
        return `wiki page ${page}`;
      },
    });
    await serve(reply().tool('read_file', { page: 'onboarding' }), reply().text('Done.'));
    await agent({ tools: [myRead] }).run('read the onboarding page');
    const tools = server!.requests[0]!.body.tools as Array<{
      function: { name: string; description: string };
    }>;
    expect(tools.filter((t) => t.function.name === 'read_file')).toEqual([
      expect.objectContaining({
        function: expect.objectContaining({ description: 'Reads from the company wiki.' }),
      }),
    ]);
    expect(reads).toEqual(['onboarding']);
    expect(toolMessages(1)).toEqual(['wiki page onboarding']);
  });

  it('fails at construction for a custom tool named like a group', () => {
    const git = defineTool({
      name: 'git',
      description: 'x',
      parameters: z.object({}),
      mutates: false,
      run: async () => '',
    });
    expect(() => new Agent({ tools: [git] })).toThrow(/custom tool is named "git", the name of a tool group/);
  });
});

describe('approvals', () => {
  it('asks the approve callback: always, once, and deny with a reason', async () => {
    await serve(
      reply().tool('write_file', { path: 'notes/a.txt', content: 'a\n' }),
      reply().tool('write_file', { path: 'notes/b.txt', content: 'b\n' }),
      reply().tool('shell', { command: 'echo c > c.txt' }),
      reply().tool('shell', { command: 'touch d.txt' }),
      reply().text('Three of four.'),
    );
    const asked: ApprovalRequest[] = [];
    const answers = [
      { decision: 'always' } as const,
      true,
      { decision: 'deny', reason: 'not today' } as const,
    ];
    const result = await agent({
      approve: async (request) => {
        asked.push(request);
        return answers[asked.length - 1]!;
      },
    }).run('make some files');

    // b.txt is in the directory "always" covered, so it was not asked about.
    expect(asked.map((r) => r.call.name)).toEqual(['write_file', 'shell', 'shell']);
    expect(asked[1]).toMatchObject({ summary: expect.stringContaining('echo c > c.txt') });
    expect(await readFile(join(workspace, 'notes/a.txt'), 'utf8')).toBe('a\n');
    expect(await readFile(join(workspace, 'notes/b.txt'), 'utf8')).toBe('b\n');
    expect(await readFile(join(workspace, 'c.txt'), 'utf8')).toBe('c\n');
    await expect(readFile(join(workspace, 'd.txt'))).rejects.toThrow();
    expect(toolMessages(4).at(-1)).toMatch(/^Error: Not run: not today\./);
    expect(result.toolCalls.map((c) => c.ok)).toEqual([true, true, true, false]);
    expect(result.reason).toBe('completed');
  });

  it('pauses without a callback, then another process resumes with the approved calls', async () => {
    await serve(
      reply()
        .tool('write_file', { path: 'yes.txt', content: 'approved\n' })
        .tool('write_file', { path: 'no.txt', content: 'declined\n' }),
      reply().text('One written, one declined.'),
    );
    const first = agent();
    const paused = await first.run('write two files');
    expect(paused).toMatchObject({ paused: true, reason: 'paused', toolCalls: [] });
    expect(paused.pending.map((c) => c.name)).toEqual(['write_file', 'write_file']);
    await expect(first.run('something else')).rejects.toThrow(AgentError);
    await expect(first.resume({ approved: ['call_nope'] })).rejects.toThrow(
      /Not waiting for approval: call_nope/,
    );
    await first.close();

    // No workspace given: the stored session knows it.
    const script = join(dir, 'resume-child.mts');
    await writeFile(
      script,
      `import { Agent } from ${JSON.stringify(indexModule)};
const [baseUrl, dbPath, sessionId, approved] = process.argv.slice(2);
const agent = new Agent({ baseUrl, dbPath, sessionId, maxRetries: 0, contextWindow: 32000 });
const result = await agent.resume({ approved: [approved], reason: 'only yes.txt' });
await agent.close();
console.log(JSON.stringify(result));`,
    );
    const { stdout } = await exec(
      process.execPath,
      [
        '--import',
        'tsx',
        script,
        server!.baseUrl,
        join(dir, 'hearth.db'),
        paused.sessionId,
        paused.pending[0]!.id,
      ],
      { cwd: process.cwd() },
    );
    const resumed = JSON.parse(stdout) as AgentResult;
    expect(resumed).toMatchObject({
      reason: 'completed',
      text: 'One written, one declined.',
      sessionId: paused.sessionId,
      paused: false,
      toolCalls: [
        { call: paused.pending[0], ok: true },
        { call: paused.pending[1], ok: false, output: expect.stringMatching(/only yes\.txt/) },
      ],
    });
    expect(await readFile(join(workspace, 'yes.txt'), 'utf8')).toBe('approved\n');
    await expect(readFile(join(workspace, 'no.txt'))).rejects.toThrow();
    expect(server!.requests).toHaveLength(2);
  });

  it('resumes in the same process, approving every pending call', async () => {
    await serve(reply().tool('write_file', { path: 'a.txt', content: 'a' }), reply().text('Done.'));
    const hearth = agent();
    const paused = await hearth.run('write a');
    expect(await hearth.pending()).toEqual(paused.pending);
    const done = await hearth.resume({ approved: 'all' });
    expect(done).toMatchObject({
      reason: 'completed',
      toolCalls: [{ call: { name: 'write_file' }, ok: true }],
    });
    await expect(hearth.resume({ approved: 'all' })).rejects.toThrow(/no calls waiting/);
  });
});

describe('stopping', () => {
  it('aborts a run through its signal', async () => {
    await serve(reply().hang());
    const controller = new AbortController();
    const running = agent().run('wait forever', { signal: controller.signal });
    await server!.waitForRequests(1);
    controller.abort();
    expect(await running).toMatchObject({ reason: 'aborted', paused: false });
  });

  it('aborts every run through the agent-wide signal', async () => {
    await serve(reply().hang());
    const controller = new AbortController();
    const hearth = agent({ signal: controller.signal });
    const running = hearth.run('wait forever');
    await server!.waitForRequests(1);
    controller.abort();
    expect((await running).reason).toBe('aborted');
  });

  it('refuses a second run while one is going, and any use after close', async () => {
    await serve(reply().hang());
    const hearth = agent();
    const controller = new AbortController();
    const running = hearth.run('one', { signal: controller.signal });
    await server!.waitForRequests(1);
    await expect(hearth.run('two')).rejects.toThrow(/already going/);
    controller.abort();
    await running;
    await hearth.close();
    await expect(hearth.run('three')).rejects.toThrow(/closed/);
  });
});

describe('options', () => {
  it('rejects bad options when the agent is made, naming the option', () => {
    expect(() => new Agent({ baseUrl: 'not a url' })).toThrow(ConfigError);
    expect(() => new Agent({ baseUrl: 'not a url' })).toThrow(/baseUrl/);
    expect(() => new Agent({ maxIterations: 0 })).toThrow(/maxIterations/);
    expect(() => new Agent({ tools: ['nope'] })).toThrow(ToolSelectionError);
    expect(() => new Agent({ allow: ['shell(npm test'] })).toThrow(RuleSyntaxError);
  });

  it('plan mode refuses changes and tells the model', async () => {
    await serve(
      reply().tool('write_file', { path: 'x.txt', content: 'x' }),
      reply().text('Here is my plan.'),
    );
    const result = await agent({ permissionMode: 'plan' }).run('change things');
    expect(result.toolCalls).toMatchObject([{ ok: false }]);
    await expect(readFile(join(workspace, 'x.txt'))).rejects.toThrow();
  });
});
