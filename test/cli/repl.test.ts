import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { closedPort } from '../support/net.js';
import { atPrompt, keys } from '../support/pty.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('repl');

/** Roles a server accepts: system first, every tool result answering a call of the assistant message before it. */
function expectValidHistory(messages: ChatMessage[]): void {
  expect(messages[0]!.role).toBe('system');
  const open = new Set<string>();
  for (const m of messages.slice(1)) {
    expect(m.role).not.toBe('system');
    if (m.role === 'assistant') {
      expect(open.size).toBe(0);
      for (const call of m.tool_calls ?? []) open.add(call.id);
    } else if (m.role === 'tool') {
      expect(open.delete(m.tool_call_id)).toBe(true);
    } else expect(open.size).toBe(0);
  }
  expect(open.size).toBe(0);
}

describe('the interactive REPL on a real terminal', () => {
  it('streams the answer to a typed task, then shows the status line and prompts again', async () => {
    // llama.cpp's figures for the reply (tools/server result_timings), shown at the end of the line.
    const timings = { cache_n: 1536, prompt_n: 120, prompt_per_second: 479.81, predicted_per_second: 38.49 };
    const term = await cli.repl([
      reply().text('Hello from the model, streamed in pieces.').chunkSize(5).finalFields({ timings }),
    ]);
    expect(term.screen).toMatch(/Hearth \S+ · scripted-model/);
    const shown = await term.enter('say hello');
    expect(shown).toContain('Hello from the model, streamed in pieces.');
    // model · context used/window · tokens · permission mode · sandbox · speed
    expect(shown).toMatch(
      /scripted-model · ctx [\d.k]+\/8\.2k \(\d+%\) · [\d.k]+ tokens · normal · \S+ · 38\.5 tok\/s · prompt 480 tok\/s, 1\.5k cached · first token [\d.]+s/,
    );
    expect(cli.server.requests[0]!.body.messages.at(-1)).toEqual({ role: 'user', content: 'say hello' });
    expect(cli.server.requests[0]!.body.stream).toBe(true);
    term.send('/exit\r');
    expect(await term.exited).toBe(0);
    expect(term.screen).toMatch(/continue with: hearth --resume [0-9a-f]+/);
  });

  it('asks before a change with the diff, and after `a` does not ask again for a similar call', async () => {
    const term = await cli.repl([
      reply().tool('write_file', { path: 'notes/one.txt', content: 'first\n' }),
      reply().tool('write_file', { path: 'notes/two.txt', content: 'second\n' }),
      reply().text('Wrote both.'),
    ]);
    term.send('write two notes\r');
    await term.waitFor(/\? write_file notes\/one\.txt[\s\S]*\+first[\s\S]*Allow\?/);
    const shown = await term.enter('a');
    expect(shown).toMatch(/✓ write_file notes\/one\.txt/);
    expect(shown).toMatch(/✓ write_file notes\/two\.txt/);
    expect(shown).toContain('Wrote both.');
    expect(term.screen.match(/\? write_file/g)).toHaveLength(1);
    expect(await readFile(join(cli.workspace, 'notes/two.txt'), 'utf8')).toBe('second\n');
    term.send(keys.ctrlD);
    expect(await term.exited).toBe(0);
  });

  it('Ctrl+C at an approval question declines the call and cancels the turn', async () => {
    const term = await cli.repl([
      reply().tool('shell', { command: 'touch made.txt' }),
      reply().text('Fine, something else.'),
    ]);
    term.send('make a file\r');
    await term.waitFor(/\? touch made\.txt[\s\S]*Allow\?/);
    const since = term.screen.length;
    term.send(keys.ctrlC);
    await term.waitFor(/Interrupted/, undefined, since);
    await term.waitFor(atPrompt, undefined, since);
    expect(await term.enter('then something else')).toContain('Fine, something else.');
    const messages = cli.server.requests[1]!.body.messages as ChatMessage[];
    expectValidHistory(messages);
    expect(messages.find((m) => m.role === 'tool')?.content).toMatch(/cancelled/);
    await expect(readFile(join(cli.workspace, 'made.txt'))).rejects.toThrow();
  });

  it('shows the diff of an edit under its one-line summary', async () => {
    await writeFile(join(cli.workspace, 'app.txt'), 'alpha\nbeta\ngamma\n');
    const term = await cli.repl(
      [
        reply().tool('edit_file', { path: 'app.txt', old_string: 'beta', new_string: 'BETA' }),
        reply().text('Changed it.'),
      ],
      ['--yolo'],
    );
    const shown = await term.enter('shout beta');
    expect(shown).toMatch(/✓ edit_file app\.txt \d+ms\r*\n[\s\S]*-beta\r*\n\s*\+BETA/);
    expect(shown).toContain('Changed it.');
  });

  it('folds the reasoning into one line once the answer starts; /reasoning shows it again', async () => {
    await cli.serve([reply().reasoning('Let me weigh the options carefully.').text('The answer is 42.')]);
    const term = cli.terminal([], { size: { cols: 80, rows: 24 } });
    await term.waitFor(atPrompt);
    const shown = await term.enter('think first');
    expect(shown).toContain('Let me weigh the options carefully.');
    expect(shown).toMatch(/\x1b\[\d+A\r\x1b\[J✻ thought for [\d.]+s · \/reasoning shows it/);
    expect(shown).toContain('The answer is 42.');
    expect(await term.enter('/reasoning')).toContain('Let me weigh the options carefully.');
  });

  it('cancels a streaming turn on Ctrl+C and carries on in the same session', async () => {
    const term = await cli.repl([
      // The server holds the stream after "A long an" until the test is done: the rest never comes.
      reply().text('A long answer that keeps on streaming for a good while yet.').chunkSize(3).holdAfter(4),
      reply().text('Second answer.'),
    ]);
    term.send('first task\r');
    await term.waitFor(/A long/);
    const since = term.screen.length;
    term.send(keys.ctrlC);
    await term.waitFor(/Interrupted/, undefined, since);
    await term.waitFor(atPrompt, undefined, since);
    expect(term.screen).not.toContain('for a good while yet.');

    const shown = await term.enter('second task');
    expect(shown).toContain('Second answer.');
    expect(cli.server.requests).toHaveLength(2);
    const messages = cli.server.requests[1]!.body.messages as ChatMessage[];
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'first task',
      'second task',
    ]);
    expectValidHistory(messages);
    term.send('/exit\r');
    expect(await term.exited).toBe(0);
  });

  it('cancels a running command on Ctrl+C; the call gets a result and the next task sees it', async () => {
    const term = await cli.repl(
      [reply().tool('shell', { command: 'sleep 30' }), reply().text('Next one.')],
      ['--yolo'],
    );
    term.send('wait a while\r');
    await term.waitFor(/running shell sleep 30/);
    const since = term.screen.length;
    term.send(keys.ctrlC);
    await term.waitFor(/Interrupted/, undefined, since);
    await term.waitFor(atPrompt, undefined, since);
    await term.enter('go on');
    const messages = cli.server.requests[1]!.body.messages as ChatMessage[];
    expectValidHistory(messages);
    expect(messages.some((m) => m.role === 'tool')).toBe(true);
    term.send(keys.ctrlD);
    expect(await term.exited).toBe(0);
  });

  it("shows a running command's latest output, and takes a message typed during the run into that same run", async () => {
    const term = await cli.repl(
      [
        reply().tool('shell', {
          command: 'echo compiling-step-1; for i in $(seq 400); do [ -f go ] && break; sleep 0.05; done',
        }),
        reply().text('Switched to the other plan.'),
      ],
      ['--yolo'],
    );
    term.send('build it\r');
    // The spinner's line carries the command's output while it runs.
    await term.waitFor(/running shell echo compiling-step-1.*compiling-step-1/);
    term.send('use the other plan');
    await term.waitFor(/› use the other plan/);
    const since = term.screen.length;
    term.send('\r');
    await term.waitFor(/queued: added after the current step/, undefined, since);
    await writeFile(join(cli.workspace, 'go'), '');
    await term.waitFor(/Switched to the other plan\./, undefined, since);
    await term.waitFor(atPrompt, undefined, since);
    expect(cli.server.requests).toHaveLength(2);
    const messages = cli.server.requests[1]!.body.messages as ChatMessage[];
    expectValidHistory(messages);
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'use the other plan' });
    term.send(keys.ctrlD);
    expect(await term.exited).toBe(0);
  });

  it('runs a task typed before the REPL was ready like any other', async () => {
    const server = await cli.serve([reply().text('Typed ahead, answered.')]);
    const term = cli.terminal([]);
    // Sent at once: the terminal is still in cooked mode and holds the line until Hearth reads it.
    term.send('hello there\r');
    await term.waitFor(/Typed ahead, answered\./);
    await term.waitFor(atPrompt);
    expect(server.requests[0]!.body.messages.at(-1)).toEqual({ role: 'user', content: 'hello there' });
    term.send(keys.ctrlD);
    expect(await term.exited).toBe(0);
  });

  it('shows an elapsed-time indicator while the model has not answered yet', async () => {
    const term = await cli.repl([reply().text('Finally.').holdAfter(0)]);
    const since = term.screen.length;
    term.send('slow one\r');
    // The server answers only once the indicator has counted a second.
    await term.waitFor(/the model server is reading the prompt · 1s/, undefined, since);
    cli.server.release();
    await term.waitFor(atPrompt, undefined, since);
    expect(term.screen.slice(since)).toContain('Finally.');
  });

  it('starts with the task given to -i and stays interactive', async () => {
    const term = await cli.repl(
      [reply().text('First done.'), reply().text('Second done.')],
      ['-i', 'first task'],
    );
    expect(term.screen).toContain('First done.');
    expect(await term.enter('and then')).toContain('Second done.');
    const messages = cli.server.requests[1]!.body.messages as ChatMessage[];
    expect(messages.filter((m) => m.role === 'user')).toHaveLength(2);
  });

  it('exits with 0 on Ctrl+C twice at an empty prompt, and says so after the first', async () => {
    const term = await cli.repl([]);
    term.send(keys.ctrlC);
    await term.waitFor(/Ctrl\+C again to exit/);
    term.send(keys.ctrlC);
    expect(await term.exited).toBe(0);
  });

  it('prints no colour codes with NO_COLOR, and colours the answer when colour is forced', async () => {
    const answer = '# Title\n\nSome **bold** text and `code`.\n\n- item\n';
    const plain = await cli.repl([reply().text(answer)]);
    const shown = await plain.enter('markdown please');
    expect(shown).toContain('# Title');
    expect(shown).toContain('Some **bold** text');
    // Cursor movement is the terminal's business; SGR (colour, bold, dim) sequences must not appear.
    expect(plain.screen).not.toMatch(/\x1b\[[0-9;]*m/);
    plain.send(keys.ctrlD);
    await plain.exited;

    await cli.serve([reply().text(answer)]);
    const colored = cli.terminal([], { env: { NO_COLOR: undefined, FORCE_COLOR: '1' } });
    await colored.waitFor(atPrompt);
    const styled = await colored.enter('markdown please');
    expect(styled).toMatch(/\x1b\[1mTitle\x1b\[22m/);
    expect(styled).toMatch(/\x1b\[1mbold\x1b\[22m/);
    expect(styled).toMatch(/\x1b\[36mcode\x1b\[39m/);
    expect(styled).toMatch(/•\x1b\[39m item/);
  });
});

describe('the REPL without a model server', () => {
  it('opens anyway, says how to connect, lists sessions, and connects once a server answers', async () => {
    const port = await closedPort();
    const term = cli.terminal([], { env: { HEARTH_BASE_URL: `http://127.0.0.1:${port}/v1` } });
    await term.waitFor(atPrompt);
    expect(term.screen).toMatch(/no model server yet/);
    expect(term.screen).toMatch(
      /\/help, \/sessions and \/resume work meanwhile; to connect, start LM Studio/,
    );
    expect(await term.enter('/sessions')).toContain('No sessions in this workspace yet.');
    expect(await term.enter('/status')).toMatch(/server {5}not connected/);
    expect(await term.enter('hello')).toMatch(/Error: Cannot reach http:\/\/127\.0\.0\.1:\d+\/v1/);

    await cli.serve({ port, turns: [reply().text('Connected now.')] });
    expect(await term.enter('hello again')).toContain('Connected now.');
    term.send(keys.ctrlD);
    expect(await term.exited).toBe(0);
  });
});
