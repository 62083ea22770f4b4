import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { atPrompt, keys } from '../support/pty.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('repl-in');

function userMessages(request: number): string[] {
  const messages = cli.server.requests[request]!.body.messages as ChatMessage[];
  return messages.filter((m) => m.role === 'user').map((m) => m.content);
}

describe('the REPL line editor', () => {
  it('recalls earlier entries with the up arrow, also after a restart', async () => {
    const first = await cli.repl([reply().text('A.'), reply().text('B.')]);
    await first.enter('the first entry');
    await first.enter('the second entry');
    first.send(keys.up);
    await first.waitFor(/› the second entry\r\x1b\[\d+C$/);
    first.send(keys.up);
    await first.waitFor(/› the first entry\r\x1b\[\d+C$/);
    first.send(keys.down);
    await first.waitFor(/› the second entry\r\x1b\[\d+C$/);
    const since = first.screen.length;
    first.send(keys.ctrlC);
    await first.waitFor(atPrompt, undefined, since);
    first.send(keys.ctrlD);
    expect(await first.exited).toBe(0);
    const file = join(cli.home, '.hearth', 'history');
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    const second = await cli.repl([reply().text('Again.')]);
    second.send(keys.up);
    await second.waitFor(/› the second entry\r\x1b\[\d+C$/);
    expect(await second.enter('')).toContain('Again.');
    expect(userMessages(0)).toEqual(['the second entry']);
  });

  it('continues an entry on a new line after a trailing backslash or Alt+Enter', async () => {
    const term = await cli.repl([reply().text('Got three lines.')]);
    term.send('line one \\\r');
    await term.waitFor(/… \r\x1b\[\d+C$/);
    term.send(`line two${keys.altEnter}`);
    await term.waitFor(/line two\r*\n… \r\x1b\[\d+C$/);
    expect(await term.enter('line three')).toContain('Got three lines.');
    expect(userMessages(0)).toEqual(['line one \nline two\nline three']);

    // History keeps the entry whole.
    term.send(keys.up);
    await term.waitFor(/› line one \r*\n… line two\r*\n… line three/);
  });

  it('takes a paste with newlines as text: only Enter afterwards sends it', async () => {
    const term = await cli.repl([reply().text('Pasted.'), reply().text('Burst.')]);
    // Pasted Windows line endings (CR LF) make one line break each.
    term.send(keys.paste('first pasted line\r\nsecond pasted line\r'));
    await term.waitFor(/… second pasted line\r*\n… \r\x1b\[\d+C$/);
    expect(cli.server.requests).toHaveLength(0);
    expect(await term.enter('')).toContain('Pasted.');
    expect(userMessages(0)).toEqual(['first pasted line\nsecond pasted line\n']);

    // A terminal without bracketed paste delivers the newline as Enter, in the same burst as the rest.
    term.send('burst one\rburst two');
    await term.waitFor(/… burst two\r\x1b\[\d+C$/);
    expect(cli.server.requests).toHaveLength(1);
    await term.enter('');
    expect(userMessages(1).at(-1)).toBe('burst one\nburst two');
  });

  it('completes a slash command with Tab and edits in the middle of a line', async () => {
    const term = await cli.repl([reply().text('Edited entry.')]);
    term.send('/sta\t');
    await term.waitFor(/› \/status \r\x1b\[\d+C$/);
    expect(await term.enter('')).toMatch(/model\s+scripted-model/);
    // Left, a backspace, then a character: "helxo" → "hello", typed in the middle of the line.
    term.send('helxo\x1b[D\x7fl');
    await term.waitFor(/› hello\r\x1b\[\d+C$/);
    await term.enter('');
    expect(userMessages(0)).toEqual(['hello']);
  });

  it('draws a long entry that wraps and keeps the cursor where it is', async () => {
    await cli.serve([reply().text('Long one received.')]);
    const term = cli.terminal([], { size: { cols: 40, rows: 20 } });
    await term.waitFor(atPrompt);
    const long = 'x'.repeat(95);
    term.send(long);
    // 2 columns of prompt + 95 characters: the cursor ends on the third row, at column 17.
    await term.waitFor(/\x1b\[17C$/);
    term.send('\x01');
    // Ctrl+A goes back to the start: two rows up, right of the prompt.
    await term.waitFor(/\x1b\[2A\r\x1b\[2C$/);
    expect(await term.enter('')).toContain('Long one received.');
    expect(userMessages(0)).toEqual([long]);
    expect(await readFile(join(cli.home, '.hearth', 'history'), 'utf8')).toContain(long);
  });
});
