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
});
