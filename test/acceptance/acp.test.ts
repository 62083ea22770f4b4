import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as acp from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';
import { waitUntil, withDeadline } from '../support/wait.js';
import { type Editor, type EditorOptions, initialize, startEditor, updatesOf } from './acp-client.js';

/**
 * `hearth acp` as an editor drives it: the installed bin started as a child process, spoken to by
 * the ACP SDK's client side over its stdio, against the scripted model server. Every message both
 * ways is checked against the protocol's JSON schema (`wire.problems`).
 */

const require = createRequire(import.meta.url);
const everythingScript = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist',
  'index.js',
);

describe('hearth acp through the installed bin', () => {
  const cli = useCliHarness('acc-acp');
  const editors: Editor[] = [];
  afterEach(async () => {
    for (const editor of editors.splice(0)) {
      editor.child.stdin!.end();
      await withDeadline(editor.exited, 'hearth acp to exit once its editor closed stdin');
    }
  });
  const open = (options: EditorOptions = {}) => {
    const editor = startEditor(cli, options);
    editors.push(editor);
    return editor;
  };
  /** The request the model got for turn `n`: the tool results in it. */
  const toolResults = (n: number) =>
    (cli.server.requests[n]!.body as { messages: { role: string; content: string }[] }).messages
      .filter((m) => m.role === 'tool')
      .map((m) => m.content);
  const answer = (optionId: string): acp.RequestPermissionResponse => ({
    outcome: { outcome: 'selected', optionId },
  });

  it('initializes, opens a session in the editor cwd, reads and edits a file with permission answered each way; shapes follow the schema', async () => {
    const notes = join(cli.workspace, 'notes.txt');
    await writeFile(notes, 'hello\n');
    await cli.serve([
      reply().tool('read_file', { path: 'notes.txt' }),
      reply().tool('edit_file', { path: 'notes.txt', old_string: 'hello', new_string: 'hello world' }),
      reply().tool('edit_file', { path: 'notes.txt', old_string: 'world', new_string: 'there' }),
      reply().tool('edit_file', { path: 'notes.txt', old_string: 'hello', new_string: 'hi' }),
      reply().tool('edit_file', { path: 'notes.txt', old_string: 'hi', new_string: 'hey' }),
      reply().tool('shell', { command: 'echo one' }),
      reply().tool('shell', { command: 'echo one' }),
      reply().text('Edited the notes.'),
    ]);
    const answers = ['allow_once', 'reject_once', 'allow_always', 'reject_always'];
    const editor = open({ permission: async () => answer(answers.shift() ?? 'reject_once') });
    const init = await initialize(editor);
    expect(init.protocolVersion).toBe(1);
    expect(init.agentCapabilities).toMatchObject({
      loadSession: true,
      promptCapabilities: { embeddedContext: true },
      sessionCapabilities: { list: {} },
    });
    const created = await editor.agent.request('session/new', { cwd: cli.workspace, mcpServers: [] });
    expect(created.modes?.availableModes.map((m) => m.id)).toEqual(['normal', 'manual', 'plan', 'auto']);
    expect(created.modes?.currentModeId).toBe('normal');
    const { sessionId } = created;

    const done = await editor.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'fix the notes' }],
    });
    expect(done.stopReason).toBe('end_turn');

    // Read once, allowed once; rejected once; allowed always, so the next edit of it is not asked;
    // a command rejected always is not asked again and does not run.
    expect(await readFile(notes, 'utf8')).toBe('hey world\n');
    expect(editor.permissions).toHaveLength(4);
    expect(editor.permissions[0]!.options.map((o) => o.kind)).toEqual([
      'allow_once',
      'allow_always',
      'reject_once',
      'reject_always',
    ]);
    expect(editor.permissions[0]!.toolCall).toMatchObject({ kind: 'edit', locations: [{ path: notes }] });
    expect(editor.permissions[3]!.toolCall).toMatchObject({ kind: 'execute', title: 'echo one' });
    expect(toolResults(7).slice(-2)).toEqual([
      expect.stringContaining('the user said no'),
      expect.stringContaining('the user said no to this call for the rest of the session'),
    ]);

    const calls = updatesOf(editor, sessionId, 'tool_call');
    expect(calls.map((c) => c.kind)).toEqual(['read', 'edit', 'edit', 'edit', 'edit', 'execute', 'execute']);
    expect(calls[0]).toMatchObject({
      title: expect.stringContaining('notes.txt'),
      locations: [{ path: notes }],
    });
    const results = updatesOf(editor, sessionId, 'tool_call_update').filter((u) => u.status);
    const diff = results.find((u) => u.toolCallId === calls[1]!.toolCallId && u.status === 'completed');
    expect(diff?.content).toEqual([
      { type: 'diff', path: notes, oldText: 'hello\n', newText: 'hello world\n' },
    ]);
    expect(results.find((u) => u.toolCallId === calls[2]!.toolCallId)?.status).toBe('failed');
    const text = updatesOf(editor, sessionId, 'agent_message_chunk')
      .map((u) => (u.content.type === 'text' ? u.content.text : ''))
      .join('');
    expect(text).toBe('Edited the notes.');
    expect(updatesOf(editor, sessionId, 'usage_update').length).toBeGreaterThan(0);
    expect(editor.wire.messages.filter((m) => m.message.method === 'session/update').length).toBeGreaterThan(
      10,
    );
    expect(editor.wire.problems).toEqual([]);
  });

  /** An editor, initialized, with a new session in the workspace. */
  const session = async (options: EditorOptions = {}, servers: acp.McpServer[] = []) => {
    const editor = open(options);
    await initialize(editor, options.capabilities);
    const { sessionId } = await editor.agent.request('session/new', {
      cwd: cli.workspace,
      mcpServers: servers,
    });
    return { editor, sessionId };
  };
  const said = (editor: Editor, sessionId: string) =>
    updatesOf(editor, sessionId, 'agent_message_chunk')
      .map((u) => (u.content.type === 'text' ? u.content.text : ''))
      .join('');

  it('a cancel mid-turn stops the run at once with stop reason cancelled, also while a permission question is open; the session goes on', async () => {
    await cli.serve([
      reply().text('Working on it, step one of many').chunkSize(8).holdAfter(2),
      reply().tool('write_file', { path: 'x.txt', content: 'x' }),
      reply().text('Back again.'),
    ]);
    const { editor, sessionId } = await session({ permission: () => new Promise(() => {}) });
    const first = editor.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'work' }],
    });
    await waitUntil(() => said(editor, sessionId).length > 0, 'the first chunk in the editor');
    await editor.agent.notify('session/cancel', { sessionId });
    expect((await first).stopReason).toBe('cancelled');
    cli.server.release();

    const second = editor.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'write x' }],
    });
    await waitUntil(() => editor.permissions.length === 1, 'the permission question');
    await editor.agent.notify('session/cancel', { sessionId });
    expect((await second).stopReason).toBe('cancelled');
    // The open question was withdrawn ($/cancel_request) and the call did not run.
    await waitUntil(
      () => editor.wire.messages.some((m) => m.from === 'agent' && m.message.method === '$/cancel_request'),
      'the permission request cancelled',
    );
    await expect(readFile(join(cli.workspace, 'x.txt'), 'utf8')).rejects.toThrow();

    const third = await editor.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'again' }],
    });
    expect(third.stopReason).toBe('end_turn');
    expect(said(editor, sessionId)).toContain('Back again.');
    expect(editor.wire.problems).toEqual([]);
  });

  it('set_mode maps to the permission modes: plan refuses changes unasked, auto runs them unasked, an unknown mode is a clear error', async () => {
    await cli.serve([
      reply().tool('write_file', { path: 'plan.txt', content: 'no' }),
      reply().text('Here is my plan.'),
      reply().tool('write_file', { path: 'yolo.txt', content: 'yes' }),
      reply().text('Written.'),
    ]);
    const { editor, sessionId } = await session();
    await editor.agent.request('session/set_mode', { sessionId, modeId: 'plan' });
    await waitUntil(
      () => updatesOf(editor, sessionId, 'current_mode_update').length === 1,
      'the mode update',
    );
    await editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'plan it' }] });
    await expect(readFile(join(cli.workspace, 'plan.txt'), 'utf8')).rejects.toThrow();
    expect(toolResults(1).at(-1)).toContain('Plan mode');

    await editor.agent.request('session/set_mode', { sessionId, modeId: 'auto' });
    await editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'do it' }] });
    expect(await readFile(join(cli.workspace, 'yolo.txt'), 'utf8')).toBe('yes');
    expect(editor.permissions).toEqual([]);

    await expect(
      editor.agent.request('session/set_mode', { sessionId, modeId: 'reckless' }),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('normal, manual, plan, auto'),
    });
    expect(editor.wire.problems).toEqual([]);
  });

  it('an editor that goes away ends the process; the next lists the stored session, loads it with its history and goes on', async () => {
    await cli.serve([reply().text('Noted: kiwi.'), reply().text('The word was kiwi.')]);
    const first = await session();
    await first.editor.agent.request('session/prompt', {
      sessionId: first.sessionId,
      prompt: [{ type: 'text', text: 'remember the word kiwi' }],
    });
    first.editor.child.stdin!.end();
    expect(await withDeadline(first.editor.exited, 'hearth acp to exit')).toBe(0);
    editors.splice(editors.indexOf(first.editor), 1);

    const editor = open();
    await initialize(editor);
    const listed = await editor.agent.request('session/list', { cwd: cli.workspace });
    expect(listed.sessions).toEqual([
      expect.objectContaining({
        sessionId: first.sessionId,
        cwd: cli.workspace,
        title: 'remember the word kiwi',
      }),
    ]);
    await editor.agent.request('session/load', {
      sessionId: first.sessionId,
      cwd: cli.workspace,
      mcpServers: [],
    });
    const replayed = editor.updates.filter((n) => n.sessionId === first.sessionId).map((n) => n.update);
    expect(replayed.slice(0, 2)).toEqual([
      { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'remember the word kiwi' } },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Noted: kiwi.' } },
    ]);
    const done = await editor.agent.request('session/prompt', {
      sessionId: first.sessionId,
      prompt: [{ type: 'text', text: 'which word?' }],
    });
    expect(done.stopReason).toBe('end_turn');
    expect(JSON.stringify(cli.server.requests[1]!.body)).toContain('remember the word kiwi');
    await expect(
      editor.agent.request('session/load', {
        sessionId: 'no-such-session',
        cwd: cli.workspace,
        mcpServers: [],
      }),
    ).rejects.toMatchObject({ code: -32002 });
    expect(editor.wire.problems).toEqual([]);
  });

  it("adds the editor's MCP server to the session: the model finds its tool and calls it", async () => {
    await cli.serve([
      reply().tool('tool_search', { query: 'echo' }),
      reply().tool('use_tool', { name: 'mcp__everything__echo', args: { message: 'from the editor' } }),
      reply().text('It echoed.'),
    ]);
    const { editor, sessionId } = await session({}, [
      { name: 'everything', command: process.execPath, args: [everythingScript], env: [] },
    ]);
    await editor.agent.request('session/set_mode', { sessionId, modeId: 'auto' });
    const done = await editor.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'echo' }],
    });
    expect(done.stopReason).toBe('end_turn');
    expect(toolResults(2).at(-1)).toContain('from the editor');
    expect(editor.wire.problems).toEqual([]);
  });

  it("reads the editor's unsaved buffer and writes through fs/write_text_file when it offers them; paths outside the workspace stay refused", async () => {
    const notes = join(cli.workspace, 'notes.txt');
    await writeFile(notes, 'on disk\n');
    const outside = join(cli.home, 'outside.txt');
    await writeFile(outside, 'secret\n');
    await cli.serve([
      reply().tool('read_file', { path: 'notes.txt' }),
      reply().tool('edit_file', { path: 'notes.txt', old_string: 'unsaved', new_string: 'edited' }),
      reply().tool('read_file', { path: outside }),
      reply().text('Done.'),
    ]);
    const buffers = new Map([[notes, 'unsaved buffer\n']]);
    const { editor, sessionId } = await session({
      capabilities: { fs: { readTextFile: true, writeTextFile: true } },
      buffers,
      permission: async () => answer('allow_once'),
    });
    await editor.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'edit notes' }],
    });
    expect(toolResults(1).at(-1)).toContain('unsaved buffer');
    expect(await readFile(notes, 'utf8')).toBe('edited buffer\n');
    expect(editor.fsCalls).toContainEqual({ method: 'write', path: notes });
    expect(editor.fsCalls.some((c) => c.path === outside)).toBe(false);
    expect(toolResults(3).at(-1)).not.toContain('secret');
    const edit = updatesOf(editor, sessionId, 'tool_call_update').find(
      (u) => u.content?.[0]?.type === 'diff',
    );
    expect(edit?.content).toEqual([
      { type: 'diff', path: notes, oldText: 'unsaved buffer\n', newText: 'edited buffer\n' },
    ]);
    expect(editor.wire.problems).toEqual([]);
  });

  it('answers malformed messages with JSON-RPC errors and keeps serving', async () => {
    await cli.serve([reply().text('Still here.')]);
    const editor = open();
    editor.raw('{this is not json');
    await waitUntil(() => editor.wire.errors().some((e) => e.code === -32700), 'a parse error');
    await initialize(editor);
    editor.raw('{"jsonrpc":"2.0","id":"bad-1","method":"session/prompt","params":{"prompt":"no"}}');
    editor.raw('{"jsonrpc":"2.0","id":"bad-2","method":"session/teleport","params":{}}');
    await waitUntil(() => editor.wire.errors().length >= 3, 'three errors');
    expect(editor.wire.errors().map((e) => e.code)).toEqual([-32700, -32602, -32601]);
    await expect(
      editor.agent.request('session/prompt', { sessionId: 'nope', prompt: [{ type: 'text', text: 'hi' }] }),
    ).rejects.toMatchObject({ code: -32002 });
    const { sessionId } = await editor.agent.request('session/new', { cwd: cli.workspace, mcpServers: [] });
    await editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    expect(said(editor, sessionId)).toBe('Still here.');
    expect(editor.child.exitCode).toBeNull();
    expect(editor.wire.problems).toEqual([]);
  });

  it("runs commands in the editor's terminal when it offers one, still inside Hearth's sandbox", async () => {
    await cli.serve([
      reply().tool('shell', { command: 'echo from-the-terminal; echo $HEARTH_SANDBOXED' }),
      reply().text('Ran it.'),
    ]);
    const { editor, sessionId } = await session({ capabilities: { terminal: true } });
    await editor.agent.request('session/set_mode', { sessionId, modeId: 'auto' });
    await editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run it' }] });
    const [terminal] = [...editor.terminals.values()];
    expect(terminal?.command.args).toContain('--run-in-sandbox');
    expect(terminal?.output).toContain('from-the-terminal');
    // The command ran in the session's sandbox, which marks its environment.
    expect(toolResults(1).at(-1)).toMatch(/from-the-terminal\s+\S+/);
    const [id] = [...editor.terminals.keys()];
    expect(
      updatesOf(editor, sessionId, 'tool_call_update').some((u) =>
        u.content?.some((c) => c.type === 'terminal' && c.terminalId === id),
      ),
    ).toBe(true);
    expect(editor.wire.problems).toEqual([]);
  });
});
