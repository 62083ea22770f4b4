import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { McpHub } from '../../src/mcp/hub.js';
import { gatedServer } from '../support/gated-server.js';
import { ManualClock } from '../support/manual-clock.js';
import { closedPort } from '../support/net.js';
import { hostProcessesWith } from '../support/processes.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';
import { waitUntil } from '../support/wait.js';
import { nodeServer, openHub, results, runWithHub, serverScript, testServer } from './support.js';

vi.setConfig({ testTimeout: 60_000 });

let workspace: string;
let home: string;
let llm: ScriptedServer | undefined;
let hub: McpHub | undefined;
let child: ChildProcess | undefined;

beforeEach(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-mcp-ws-')));
  home = await realpath(await mkdtemp(join(tmpdir(), 'hearth-mcp-home-')));
});
afterEach(async () => {
  await hub?.close();
  hub = undefined;
  child?.kill();
  child = undefined;
  await llm?.close();
  await rm(workspace, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

const serve = async (...turns: TurnInput[]) => {
  llm = await startScriptedServer({ turns });
  return llm.baseUrl;
};

describe('MCP client over stdio (server-filesystem)', () => {
  it('starts the server only on first use, runs a call end to end, and stops it with the session', async () => {
    await writeFile(join(workspace, 'notes.txt'), 'the answer is 42\n');
    const fs = nodeServer(serverScript('@modelcontextprotocol/server-filesystem'), workspace);
    hub = await openHub({ fs }, { userDir: home, workspace });
    const running = () => hostProcessesWith(workspace).filter((pid) => pid !== process.pid);

    // A run that never touches MCP starts nothing.
    await runWithHub({ hub, baseUrl: await serve(reply().text('Nothing to do.')), workspace });
    expect(running()).toEqual([]);
    expect(llm!.requests[0]!.body.tools).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          function: expect.objectContaining({
            name: 'tool_search',
            description: expect.stringContaining('mcp fs: (listed on first search)'),
          }),
        }),
      ]),
    );
    await llm!.close();

    const events = await runWithHub({
      hub,
      workspace,
      baseUrl: await serve(
        reply().tool('tool_search', { query: 'read text file' }),
        reply().tool('use_tool', {
          name: 'mcp__fs__read_text_file',
          args: { path: join(workspace, 'notes.txt') },
        }),
        reply().text('It says 42.'),
      ),
    });
    const [search, read] = results(events);
    expect(search!.output).toContain('"name":"mcp__fs__read_text_file"');
    expect(read).toMatchObject({ ok: true, name: 'mcp__fs__read_text_file', output: 'the answer is 42\n' });
    expect(events.find((e) => e.type === 'tool_call' && e.call.name === 'use_tool')).toMatchObject({
      label: expect.stringContaining('mcp__fs__read_text_file'),
      unwrapped: { name: 'mcp__fs__read_text_file' },
    });
    expect(hub.pid('fs')).toBeGreaterThan(0);
    expect(running()).toContain(hub.pid('fs'));
    const pid = hub.pid('fs')!;
    await hub.close();
    await waitUntil(() => !hostProcessesWith(workspace).includes(pid), 'the server process to end');
  });

  it('offers cached tools directly when they fit the window, and behind the index when they do not', async () => {
    const fs = nodeServer(serverScript('@modelcontextprotocol/server-filesystem'), workspace);
    hub = await openHub({ fs }, { userDir: home, workspace });
    expect(await hub.list('fs')).toBeDefined();
    await hub.close();

    hub = await openHub({ fs }, { userDir: home, workspace, contextWindow: 200_000 });
    expect(hub.offered.map((t) => t.name)).toContain('mcp__fs__read_text_file');
    expect(hub.status()[0]).toMatchObject({ offered: 'direct', running: false });
    await hub.close();

    hub = await openHub({ fs }, { userDir: home, workspace, contextWindow: 8192 });
    expect(hub.offered).toEqual([]);
    expect(hub.deferred[0]!.tools().map((t) => t.name)).toContain('mcp__fs__read_text_file');
    expect(hub.status()[0]).toMatchObject({ offered: 'index', running: false, tools: expect.any(Number) });
  });
});

describe('a tool called by name before its server was ever listed', () => {
  it('starts and lists that server when the call runs, directly or through use_tool, and no other', async () => {
    hub = await openHub(
      { a: nodeServer(testServer, 'a', '3'), b: nodeServer(testServer, 'b', '2') },
      { userDir: home, workspace },
    );
    expect(hub.deferred.every((g) => g.tools().length === 0)).toBe(true);
    const events = await runWithHub({
      hub,
      workspace,
      // One turn: every call is prepared before the first runs, so none of them finds the server listed.
      baseUrl: await serve(
        reply()
          .tool('mcp__a__a_tool_1', { id: 'x' })
          .tool('use_tool', { name: 'mcp__a__a_tool_2', args: { id: 'y' } })
          .tool('mcp__a__a_tool_9', { id: 'z' }),
        reply().text('Done.'),
      ),
    });
    const [direct, used, missing] = results(events);
    expect(direct).toMatchObject({ ok: true, name: 'mcp__a__a_tool_1', output: 'a record 1: x' });
    expect(used).toMatchObject({ ok: true, name: 'mcp__a__a_tool_2', output: 'a record 2: y' });
    expect(missing).toMatchObject({ ok: false, name: 'mcp__a__a_tool_9' });
    expect(missing!.output).toMatch(
      /^Unknown tool "mcp__a__a_tool_9"\. Did you mean "mcp__a__a_tool_\d"\? MCP server "a" has: mcp__a__a_tool_0, /,
    );
    expect(hub.status().map((s) => [s.name, s.running, s.tools])).toEqual([
      ['a', true, 3],
      ['b', false, undefined],
    ]);
  });

  it('starts nothing for a call the user declines, and names a server that cannot start', async () => {
    hub = await openHub(
      { a: nodeServer(testServer, 'a', '3'), broken: nodeServer(testServer, 'exit') },
      { userDir: home, workspace },
    );
    let events = await runWithHub({
      hub,
      workspace,
      mode: 'normal',
      answer: { decision: 'deny' },
      baseUrl: await serve(reply().tool('mcp__a__a_tool_0', { id: 'x' }), reply().text('Fine.')),
    });
    expect(events.find((e) => e.type === 'approval_request')).toMatchObject({
      call: { name: 'mcp__a__a_tool_0' },
    });
    expect(results(events)[0]).toMatchObject({ ok: false });
    expect(hub.status().some((s) => s.running || s.tools !== undefined)).toBe(false);
    await llm!.close();

    events = await runWithHub({
      hub,
      workspace,
      baseUrl: await serve(reply().tool('mcp__broken__anything', {}), reply().text('Could not.')),
    });
    expect(results(events)[0]).toMatchObject({ ok: false });
    expect(results(events)[0]!.output).toMatch(
      /^MCP server "broken" could not be started: (.|\n)*fatal: missing API token/,
    );
  });
});

describe('a server slower to start than a search waits (npx downloading it)', () => {
  it('goes on starting, is listed once started, and a later search finds its tools', async () => {
    const slow = gatedServer(join(home, 'downloaded'), testServer, 'slow', '2');
    const clock = new ManualClock();
    hub = await openHub({ slow: slow.spec }, { userDir: home, workspace, clock });
    const listing = hub.list('slow');
    await clock.elapse(30_000);
    expect(await listing).toBeUndefined();
    expect(hub.status()[0]).toMatchObject({
      running: true,
      problem: expect.stringMatching(
        /^MCP server "slow" is still starting \(no answer after 30 s; a first start may be downloading it\)/,
      ),
    });

    await slow.open();
    await waitUntil(() => hub!.status()[0]!.tools === 2, 'the server to be listed once started');
    expect(hub.status()[0]!.problem).toBeUndefined();
    const events = await runWithHub({
      hub,
      workspace,
      baseUrl: await serve(
        reply().tool('tool_search', { query: 'slow record' }),
        reply().tool('mcp__slow__slow_tool_1', { id: 'q' }),
        reply().text('Done.'),
      ),
    });
    const [search, call] = results(events);
    expect(search!.output).toContain('"name":"mcp__slow__slow_tool_1"');
    expect(call).toMatchObject({ ok: true, output: 'slow record 1: q' });
  });

  it('is stopped with the session without waiting for its start', async () => {
    const gate = join(home, 'never');
    const clock = new ManualClock();
    hub = await openHub(
      { slow: gatedServer(gate, testServer, 'slow', '2').spec },
      { userDir: home, workspace, clock },
    );
    const listing = hub.list('slow');
    await clock.elapse(30_000);
    await listing;
    await waitUntil(() => hostProcessesWith(gate).length > 0, 'the server to be starting');
    // Were the start waited for, this would hang: the gate never opens.
    await hub.close();
    hub = undefined;
    await waitUntil(() => hostProcessesWith(gate).length === 0, 'the starting server to end');
  });
});

describe('MCP client over Streamable HTTP (server-everything)', () => {
  it('calls tools and turns text and images into results the model can read', async () => {
    const port = await closedPort();
    child = spawn(
      process.execPath,
      [serverScript('@modelcontextprotocol/server-everything'), 'streamableHttp'],
      {
        env: { ...process.env, PORT: String(port) },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let said = '';
    child.stderr!.on('data', (chunk) => {
      said += chunk;
    });
    await waitUntil(() => said.includes(`port ${port}`), 'server-everything to listen');
    hub = await openHub(
      { every: { type: 'http', url: `http://127.0.0.1:${port}/mcp`, headers: {} } },
      { userDir: home, workspace },
    );
    const events = await runWithHub({
      hub,
      workspace,
      baseUrl: await serve(
        reply().tool('tool_search', { query: 'echo' }),
        reply().tool('mcp__every__echo', { message: 'hello over http' }),
        reply().tool('use_tool', { name: 'mcp__every__get-tiny-image' }),
        reply().text('Done.'),
      ),
    });
    const [, echo, image] = results(events);
    expect(echo).toMatchObject({ ok: true, output: 'Echo: hello over http' });
    expect(image!.output).toMatch(/\[image: image\/png, \d+ bytes\]/);
  });
});

describe('MCP servers that fail', () => {
  it('reports a server that cannot start to the model, with what it said, and the session goes on', async () => {
    hub = await openHub({ broken: nodeServer(testServer, 'exit') }, { userDir: home, workspace });
    const events = await runWithHub({
      hub,
      workspace,
      baseUrl: await serve(reply().tool('tool_search', { query: 'anything' }), reply().text('Could not.')),
    });
    const [search] = results(events);
    expect(search!.output).toMatch(
      /Not available: MCP server "broken" could not be started: .*\n(.|\n)*fatal: missing API token/,
    );
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'completed' });
  });

  it('turns a crash during a call into a tool error, and starts the server again on the next call', async () => {
    hub = await openHub({ fx: nodeServer(testServer, 'faulty') }, { userDir: home, workspace });
    const events = await runWithHub({
      hub,
      workspace,
      baseUrl: await serve(
        reply().tool('tool_search', { query: 'ok die' }),
        reply().tool('use_tool', { name: 'mcp__fx__die' }),
        reply().tool('use_tool', { name: 'mcp__fx__ok' }),
        reply().text('Recovered.'),
      ),
    });
    const [, died, ok] = results(events);
    expect(died).toMatchObject({ ok: false });
    expect(died!.output).toMatch(/MCP server "fx" failed: it closed the connection/);
    expect(died!.output).toContain('about to crash');
    expect(ok).toMatchObject({ ok: true, output: expect.stringMatching(/^ok from \d+$/) });
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'completed' });
  });

  it('gives up on a call the server never answers, and the next call gets a fresh server', async () => {
    hub = await openHub(
      { fx: nodeServer(testServer, 'faulty') },
      { userDir: home, workspace, callTimeoutMs: 300 },
    );
    await hub.list('fx');
    const first = hub.pid('fx');
    const events = await runWithHub({
      hub,
      workspace,
      baseUrl: await serve(
        reply().tool('mcp__fx__hang', {}),
        reply().tool('mcp__fx__ok', {}),
        reply().text('Moved on.'),
      ),
    });
    const [hang, ok] = results(events);
    expect(hang).toMatchObject({
      ok: false,
      output: expect.stringMatching(/MCP server "fx" failed: it did not answer in time/),
    });
    expect(ok).toMatchObject({ ok: true });
    expect(hub.pid('fx')).not.toBe(first);
  });
});

describe('permissions on MCP tools', () => {
  const script = () => [reply().tool('mcp__fx__ok', {}), reply().text('Done.')];

  it('asks in normal mode, and a rule naming the server allows or denies its tools', async () => {
    hub = await openHub({ fx: nodeServer(testServer, 'faulty') }, { userDir: home, workspace });
    await hub.list('fx');

    let events = await runWithHub({ hub, workspace, mode: 'normal', baseUrl: await serve(...script()) });
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'paused' });
    await llm!.close();

    events = await runWithHub({
      hub,
      workspace,
      mode: 'normal',
      allow: ['mcp__fx__*'],
      baseUrl: await serve(...script()),
    });
    expect(results(events)[0]).toMatchObject({ ok: true });
    await llm!.close();

    events = await runWithHub({
      hub,
      workspace,
      mode: 'auto',
      deny: ['mcp__fx__*'],
      baseUrl: await serve(...script()),
    });
    expect(results(events)[0]).toMatchObject({
      ok: false,
      output: expect.stringContaining('denied by the rule "mcp__fx__*"'),
    });
  });
});
