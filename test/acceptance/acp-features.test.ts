import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';
import { waitUntil, withDeadline } from '../support/wait.js';
import { type Editor, type EditorOptions, initialize, startEditor, updatesOf } from './acp-client.js';

/**
 * `hearth acp` beyond the basics (acp.test.ts): the model choice as a config option, Hearth's own
 * slash commands (/undo, /rewind, /compact), sub-agents' calls in the editor and the tool kinds.
 * The installed bin, driven by the ACP SDK's client side; every message checked against the schema.
 */
describe('hearth acp: models, commands, sub-agents and tool kinds', () => {
  const cli = useCliHarness('acc-acp-more');
  const editors: Editor[] = [];
  afterEach(async () => {
    for (const editor of editors.splice(0)) {
      editor.child.stdin!.end();
      await withDeadline(editor.exited, 'hearth acp to exit once its editor closed stdin');
    }
  });
  const session = async (options: EditorOptions = {}) => {
    const editor = startEditor(cli, options);
    editors.push(editor);
    await initialize(editor, options.capabilities);
    const created = await editor.agent.request('session/new', { cwd: cli.workspace, mcpServers: [] });
    return { editor, created, sessionId: created.sessionId };
  };
  const said = (editor: Editor, sessionId: string) =>
    updatesOf(editor, sessionId, 'agent_message_chunk')
      .map((u) => (u.content.type === 'text' ? u.content.text : ''))
      .join('');
  const prompt = (editor: Editor, sessionId: string, text: string) =>
    editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
  const modelOf = (n: number) => (cli.server.requests[n]!.body as { model: string }).model;

  it('offers the profiles and the served models as a "model" config option; switching goes on with the same session on the new model', async () => {
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(
      join(cli.hearthHome, 'config.json'),
      JSON.stringify({ models: { big: { model: 'model-b', temperature: 0.1 } } }),
    );
    await cli.serve({
      turns: [reply().text('On a.'), reply().text('On b.'), reply().text('On the profile.')],
      models: ['model-a', 'model-b', 'text-embedding-x'],
    });
    const { editor, created, sessionId } = await session();
    const model = created.configOptions?.find((o) => o.id === 'model');
    expect(model).toMatchObject({ category: 'model', type: 'select', currentValue: 'model-a' });
    const values = (model && 'options' in model ? model.options : []) as Array<{ value: string }>;
    // Embedding models cannot chat: they are not offered.
    expect(values.map((o) => o.value)).toEqual(['big', 'model-a', 'model-b']);
    expect(created.configOptions?.find((o) => o.id === 'mode')).toMatchObject({
      category: 'mode',
      currentValue: 'normal',
    });
    await prompt(editor, sessionId, 'remember plum');
    expect(modelOf(0)).toBe('model-a');

    await editor.agent.request('session/set_config_option', { sessionId, configId: 'mode', value: 'plan' });
    const switched = await editor.agent.request('session/set_config_option', {
      sessionId,
      configId: 'model',
      value: 'model-b',
    });
    expect(switched.configOptions.find((o) => o.id === 'model')).toMatchObject({ currentValue: 'model-b' });
    // The mode stays as it was set.
    expect(switched.configOptions.find((o) => o.id === 'mode')).toMatchObject({ currentValue: 'plan' });
    await prompt(editor, sessionId, 'which fruit?');
    expect(modelOf(1)).toBe('model-b');
    expect(JSON.stringify(cli.server.requests[1]!.body)).toContain('remember plum');

    const profiled = await editor.agent.request('session/set_config_option', {
      sessionId,
      configId: 'model',
      value: 'big',
    });
    expect(profiled.configOptions.find((o) => o.id === 'model')).toMatchObject({ currentValue: 'big' });
    await prompt(editor, sessionId, 'and now?');
    expect(cli.server.requests[2]!.body).toMatchObject({ model: 'model-b', temperature: 0.1 });
    expect(said(editor, sessionId)).toBe('On a.On b.On the profile.');

    await expect(
      editor.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'gpt-9' }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('big, model-a, model-b') });
    expect(editor.wire.problems).toEqual([]);
  });

  it('advertises /undo, /rewind and /compact; /undo puts back the file a turn edited, shown as an edit with its diff, without asking the model', async () => {
    const notes = join(cli.workspace, 'notes.txt');
    await writeFile(notes, 'first\n');
    await cli.serve([
      reply().tool('write_file', { path: 'notes.txt', content: 'second\n' }),
      reply().text('Rewritten.'),
    ]);
    const answers = ['allow_once', 'reject_once'];
    const { editor, sessionId } = await session({
      permission: async () => ({
        outcome: { outcome: 'selected', optionId: answers.shift() ?? 'reject_once' },
      }),
    });
    await waitUntil(
      () => updatesOf(editor, sessionId, 'available_commands_update').length > 0,
      'the available commands',
    );
    const names = updatesOf(editor, sessionId, 'available_commands_update')[0]!.availableCommands.map(
      (c) => c.name,
    );
    expect(names).toEqual(expect.arrayContaining(['undo', 'rewind', 'compact']));

    await prompt(editor, sessionId, 'rewrite the notes');
    expect(await readFile(notes, 'utf8')).toBe('second\n');
    const asked = cli.server.requests.length;

    const undone = await prompt(editor, sessionId, '/undo');
    expect(undone.stopReason).toBe('end_turn');
    expect(await readFile(notes, 'utf8')).toBe('first\n');
    expect(cli.server.requests.length).toBe(asked);
    const restore = updatesOf(editor, sessionId, 'tool_call').at(-1)!;
    expect(restore).toMatchObject({ kind: 'edit', locations: [{ path: notes }] });
    const result = updatesOf(editor, sessionId, 'tool_call_update').find(
      (u) => u.toolCallId === restore.toolCallId && u.status === 'completed',
    );
    expect(result?.content).toContainEqual({
      type: 'diff',
      path: notes,
      oldText: 'second\n',
      newText: 'first\n',
    });
    expect(said(editor, sessionId)).toContain('Done. /undo steps back out of it.');

    // /undo again steps out of the undo; /rewind lists the turns, /rewind 1 goes back before the first.
    await prompt(editor, sessionId, '/undo');
    expect(await readFile(notes, 'utf8')).toBe('second\n');
    await prompt(editor, sessionId, '/rewind');
    expect(said(editor, sessionId)).toContain('1. rewrite the notes (changed files)');
    await prompt(editor, sessionId, '/rewind 1');
    expect(await readFile(notes, 'utf8')).toBe('first\n');
    expect(said(editor, sessionId)).toMatch(/The conversation before turn 1 is now session [0-9a-f]+/);

    // A file changed since (by the user) is overwritten only on a yes: rejected here, it stays.
    await writeFile(notes, 'mine\n');
    await prompt(editor, sessionId, '/undo');
    expect(editor.permissions.at(-1)).toMatchObject({
      toolCall: {
        title: 'Undo the last change',
        content: [{ content: { text: expect.stringContaining('notes.txt') } }],
      },
    });
    expect(await readFile(notes, 'utf8')).toBe('mine\n');
    expect(said(editor, sessionId)).toMatch(/Nothing was changed\.$/);

    // /compact is Hearth's too: a conversation this short has nothing to make smaller.
    await prompt(editor, sessionId, '/compact');
    expect(said(editor, sessionId)).toMatch(/Not compacted: nothing could be made smaller.*\.$/);
    expect(cli.server.requests.length).toBe(asked);
    expect(editor.wire.problems).toEqual([]);
  });

  it("shows a sub-agent's tool calls as calls titled with its name (its approvals name the same call), and its start and end in the delegating call, not its text", async () => {
    await writeFile(join(cli.workspace, 'notes.txt'), 'alpha\n');
    await cli.serve([
      reply().tool('delegate', { objective: 'Copy the notes' }),
      reply().text('Let me look at the notes file now, carefully.').tool('read_file', { path: 'notes.txt' }),
      reply().tool('write_file', { path: 'copy.txt', content: 'alpha\n' }),
      reply().tool('report_result', { status: 'done', summary: 'Copied: alpha.' }),
      reply().text('Copied.'),
    ]);
    const { editor, sessionId } = await session({ args: ['--deep'] });
    const done = await prompt(editor, sessionId, 'copy the notes');
    expect(done.stopReason).toBe('end_turn');
    expect(await readFile(join(cli.workspace, 'copy.txt'), 'utf8')).toBe('alpha\n');

    const calls = updatesOf(editor, sessionId, 'tool_call');
    const delegate = calls[0]!;
    const read = calls.find((c) => c.kind === 'read')!;
    const write = calls.find((c) => c.kind === 'edit')!;
    expect(read).toMatchObject({
      title: expect.stringMatching(/^sub-agent: .*notes\.txt/),
      locations: [{ path: join(cli.workspace, 'notes.txt') }],
    });
    expect(write.title).toMatch(/^sub-agent: .*copy\.txt/);
    expect(new Set([delegate.toolCallId, read.toolCallId, write.toolCallId]).size).toBe(3);
    // The question about the sub-agent's write is about the call the editor shows.
    expect(editor.permissions.map((p) => p.toolCall.toolCallId)).toEqual([write.toolCallId]);
    const updates = updatesOf(editor, sessionId, 'tool_call_update');
    const finished = (id: string) => updates.find((u) => u.toolCallId === id && u.status === 'completed');
    expect(finished(read.toolCallId)).toBeDefined();
    expect(finished(write.toolCallId)?.content).toEqual([
      { type: 'diff', path: join(cli.workspace, 'copy.txt'), oldText: null, newText: 'alpha\n' },
    ]);
    const lines = updates
      .filter((u) => u.toolCallId === delegate.toolCallId && u.status === 'in_progress')
      .flatMap((u) => u.content ?? [])
      .map((c) => (c.type === 'content' && c.content.type === 'text' ? c.content.text : ''))
      .join('\n');
    expect(lines).toContain('⤷ sub-agent started: Copy the notes');
    expect(lines).toContain('✓ sub-agent done: Copied: alpha.');
    // The sub-agent's own words stay in its session.
    expect(said(editor, sessionId)).toBe('Copied.');
    expect(editor.wire.problems).toEqual([]);
  });

  it('reports deletes, moves and the todo list as the delete, move and think kinds', async () => {
    await writeFile(join(cli.workspace, 'old.txt'), 'x');
    await writeFile(join(cli.workspace, 'a.txt'), 'a');
    await cli.serve([
      reply().tool('shell', { command: 'rm old.txt' }),
      reply().tool('shell', { command: 'mv a.txt b.txt' }),
      reply().tool('todo_write', { todos: [{ text: 'tidy up', status: 'in_progress' }] }),
      reply().tool('shell', { command: 'ls' }),
      reply().text('Tidied.'),
    ]);
    const { editor, sessionId } = await session();
    await editor.agent.request('session/set_mode', { sessionId, modeId: 'auto' });
    await prompt(editor, sessionId, 'tidy');
    const calls = updatesOf(editor, sessionId, 'tool_call');
    expect(calls.map((c) => c.kind)).toEqual(['delete', 'move', 'think', 'execute']);
    expect(calls[0]!.locations).toEqual([{ path: join(cli.workspace, 'old.txt') }]);
    expect(calls[1]!.locations).toEqual([
      { path: join(cli.workspace, 'a.txt') },
      { path: join(cli.workspace, 'b.txt') },
    ]);
    expect(updatesOf(editor, sessionId, 'plan').at(-1)?.entries).toEqual([
      { content: 'tidy up', priority: 'medium', status: 'in_progress' },
    ]);
    expect(editor.wire.problems).toEqual([]);
  });
});
