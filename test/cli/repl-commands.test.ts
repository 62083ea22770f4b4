import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { atPrompt, keys } from '../support/pty.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('repl-cmd');

describe('REPL slash commands', () => {
  it('/help lists the commands; an unknown one suggests the closest; /status tells the setup', async () => {
    const term = await cli.repl([reply().text('That is a path.')]);
    const help = await term.enter('/help');
    for (const name of [
      '/new',
      '/sessions',
      '/resume ID',
      '/model [NAME]',
      '/mode [MODE]',
      '/compact',
      '/exit',
    ])
      expect(help).toContain(name);
    expect(await term.enter('/stauts')).toMatch(/Unknown command \/stauts\. Did you mean \/status\?/);
    const status = await term.enter('/status');
    expect(status).toMatch(/model\s+scripted-model/);
    expect(status).toMatch(/server\s+\S+ at http:\/\/127\.0\.0\.1:\d+\/v1/);
    // No native endpoint answers the scripted server: the default, and why.
    expect(status).toMatch(/context\s+8\.2k tokens \(default \(unknown: no native endpoint answered/);
    expect(status).toMatch(/! could not learn the context window from the server/);
    expect(status).toMatch(/sandbox\s+\S+/);
    expect(status).toMatch(/mode\s+normal/);
    expect(status).toMatch(/session\s+none yet/);
    // A path is a task, not a command.
    expect(await term.enter('/etc/hosts: what is it?')).toContain('That is a path.');
    term.send('/exit\r');
    expect(await term.exited).toBe(0);
  });

  it('/mode plan refuses a change without asking, and the prompt shows the mode', async () => {
    const term = await cli.repl([
      reply().tool('write_file', { path: 'x.txt', content: 'x' }),
      reply().text('Here is my plan.'),
    ]);
    expect(await term.enter('/mode plan')).toContain('Permission mode: plan');
    expect(term.screen).toMatch(/plan › /);
    const shown = await term.enter('write x.txt');
    expect(shown).toMatch(/✗ write_file x\.txt.*Plan mode/);
    expect(shown).not.toMatch(/Allow\?/);
    expect(shown).toMatch(/· plan · /);
    await expect(readFile(join(cli.workspace, 'x.txt'))).rejects.toThrow();
    expect(await term.enter('/mode')).toMatch(/\* plan/);
    expect(await term.enter('/mode sideways')).toMatch(/Unknown mode "sideways"/);
  });

  it('/todo and /plan show the session state; /tokens and /session describe the session', async () => {
    const term = await cli.repl([
      reply().tool('todo_write', {
        todos: [
          { text: 'write the tests', status: 'in_progress' },
          { text: 'ship it', status: 'pending' },
        ],
      }),
      reply().text('Listed.').usage({ prompt: 1200, completion: 34 }),
    ]);
    expect(await term.enter('/todo')).toContain('No session yet');
    await term.enter('plan the work');
    const todo = await term.enter('/todo');
    expect(todo).toMatch(/\[>\] 1\. write the tests/);
    expect(todo).toMatch(/\[ \] 2\. ship it/);
    expect(todo).toContain('0/2 done');
    expect(await term.enter('/plan')).toContain('No plan yet.');
    const tokens = await term.enter('/tokens');
    expect(tokens).toMatch(/this session\s+[\d.]+k tokens/);
    expect(tokens).toMatch(/stored\s+[\d.]+k tokens over 2 turns/);
    const session = await term.enter('/session');
    expect(session).toMatch(/id\s+[0-9a-f]{10}/);
    expect(session).toMatch(/title\s+plan the work/);
    expect(session).toMatch(/turns\s+2/);
  });

  it('/new starts another session; /sessions lists both; /resume goes back to the first', async () => {
    const term = await cli.repl([reply().text('One.'), reply().text('Two.'), reply().text('Three.')]);
    await term.enter('first session task');
    const firstId = /session\s+([0-9a-f]{10})/.exec(await term.enter('/status'))![1]!;
    expect(await term.enter('/new')).toContain('New session');
    await term.enter('second session task');
    expect(cli.server.requests[1]!.body.messages.filter((m: ChatMessage) => m.role === 'user')).toHaveLength(
      1,
    );

    const list = await term.enter('/sessions');
    expect(list).toContain(firstId);
    expect(list).toContain('first session task');
    expect(list).toMatch(/\* \w+ .*second session task/);

    expect(await term.enter(`/resume ${firstId.slice(0, 6)}`)).toMatch(
      new RegExp(`Resumed ${firstId} "first session task"`),
    );
    await term.enter('back again');
    const users = (cli.server.requests[2]!.body.messages as ChatMessage[]).filter((m) => m.role === 'user');
    expect(users.map((m) => m.content)).toEqual(['first session task', 'back again']);
    expect(await term.enter('/resume nope')).toMatch(/No session matches "nope"/);
  });

  it('hearth -c at a terminal opens the REPL on the last session of the workspace', async () => {
    const first = await cli.repl([reply().text('Noted.'), reply().text('It was kettle.')]);
    await first.enter('remember the word kettle');
    first.send('/exit\r');
    expect(await first.exited).toBe(0);
    const id = /continue with: hearth --resume ([0-9a-f]+)/.exec(first.screen)![1]!;

    const second = cli.terminal(['-c']);
    await second.waitFor(atPrompt);
    expect(second.screen).toContain(`resumed session ${id}`);
    expect(await second.enter('what was the word?')).toContain('It was kettle.');
    const users = (cli.server.requests[1]!.body.messages as ChatMessage[]).filter((m) => m.role === 'user');
    expect(users.map((m) => m.content)).toEqual(['remember the word kettle', 'what was the word?']);
  });

  it('/model lists the server models and switches the next turns to another, keeping the history', async () => {
    const term = await cli.repl({
      turns: [reply().text('From A.'), reply().text('From B.')],
      models: ['model-a', 'model-b'],
    });
    await term.enter('hello');
    const list = await term.enter('/model');
    expect(list).toMatch(/\* model-a/);
    expect(list).toContain('model-b');
    expect(await term.enter('/model b')).toMatch(/Now using model-b/);
    await term.enter('again');
    expect(cli.server.requests.map((r) => r.body.model)).toEqual(['model-a', 'model-b']);
    const users = (cli.server.requests[1]!.body.messages as ChatMessage[]).filter((m) => m.role === 'user');
    expect(users).toHaveLength(2);
    expect(await term.enter('/status')).toMatch(/model\s+model-b/);
    expect(await term.enter('/model zzz')).toMatch(/No model "zzz"/);
  });

  it('/compact summarizes the conversation; /soul shows SOUL.md; /clear clears the screen', async () => {
    const term = await cli.repl([
      // Dense in tokens, yet under what one reply may add (30% of the window, in characters).
      reply().text(`First answer. ${'Detail 7, '.repeat(800)}`),
      reply().text('Second answer.'),
      reply().text('Goal: testing. State: two answers given.'),
    ]);
    await term.enter('one');
    await term.enter('two');
    expect(await term.enter('/compact')).toMatch(/Compacted \(older turns summarized\)/);

    expect(await term.enter('/soul')).toContain('No .hearth/SOUL.md');
    await mkdir(join(cli.workspace, '.hearth'), { recursive: true });
    await writeFile(join(cli.workspace, '.hearth', 'SOUL.md'), 'Be brief and warm.\n');
    expect(await term.enter('/soul')).toContain('Be brief and warm.');
    expect(await term.enter('/clear')).toContain('\x1b[2J');
    term.send(keys.ctrlD);
    expect(await term.exited).toBe(0);
  });

  it('/plan TASK plans in plan mode, then on y carries it out with the plan as the todo list; /mode yolo is auto', async () => {
    const term = await cli.repl([
      reply().text('1. Write a.txt\n2. Verify it'),
      reply().tool('todo_write', { todos: [{ id: '1', status: 'done' }], merge: true }),
      reply().text('Planned and done.'),
    ]);
    expect(await term.enter('/mode yolo')).toContain('Permission mode: auto');
    term.send('/plan write a file\r');
    await term.waitFor(/Carry out this plan\? y yes · n no/);
    term.send('y');
    await term.waitFor(/Planned and done\./);
    await term.waitFor(atPrompt);
    const todo = await term.enter('/todo');
    expect(todo).toMatch(/\[x\] 1\. Write a\.txt/);
    expect(todo).toMatch(/\[ \] 2\. Verify it/);
    expect(await term.enter('/mode')).toMatch(/\* auto/);
    term.send(keys.ctrlD);
    expect(await term.exited).toBe(0);
  });
});
