import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

/** Text files that are not UTF-8, read and edited through the installed bin's one-shot run. */
describe('file encodings through the installed hearth', () => {
  const cli = useCliHarness('acc-enc');

  const toolResults = (request: number) =>
    (cli.server.requests[request]!.body as { messages: { role: string; content: string }[] }).messages
      .filter((m) => m.role === 'tool')
      .map((m) => m.content);

  it('reads a Latin-1 CRLF file and edits it, writing Latin-1 and CRLF back', async () => {
    const file = join(cli.workspace, 'menu.txt');
    await writeFile(file, Buffer.from('Menu\r\ncafé 2\x80\r\ncrème brûlée\r\n', 'latin1'));
    await cli.serve([
      reply().tool('read_file', { path: 'menu.txt' }),
      reply().tool('edit_file', {
        path: 'menu.txt',
        old_string: 'crème brûlée',
        new_string: 'tarte à la crème',
      }),
      reply().text('Changed the dessert.'),
    ]);
    const r = await cli.run(['--yolo', 'change the dessert']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Changed the dessert.');

    const [read] = toolResults(1);
    expect(read).toContain('café');
    expect(read).toContain('café 2€');
    expect(read).toContain('crème brûlée');
    expect(read).toMatch(/Windows-1252/);
    const [, edit] = toolResults(2);
    expect(edit).toMatch(/^Edited menu\.txt/);

    const bytes = await readFile(file);
    // 0x80 is the euro sign in Windows-1252; the line the edit did not touch keeps its bytes.
    expect(bytes.equals(Buffer.from('Menu\r\ncafé 2\x80\r\ntarte à la crème\r\n', 'latin1'))).toBe(true);
  });

  it('refuses a character the encoding lacks, naming the option, and converts when the model passes it', async () => {
    const file = join(cli.workspace, 'notes.txt');
    await writeFile(file, Buffer.from('Noël\n', 'latin1'));
    await cli.serve([
      reply().tool('write_file', { path: 'notes.txt', content: 'Noël → janvier\n' }),
      reply().tool('write_file', { path: 'notes.txt', content: 'Noël → janvier\n', encoding: 'utf-8' }),
      reply().text('Written as UTF-8.'),
    ]);
    const r = await cli.run(['--yolo', 'add the next month']);
    expect(r.code).toBe(0);
    const [refused, converted] = toolResults(2);
    expect(refused).toMatch(/Windows-1252 text, which has no "→" \(line 1\).*pass encoding "utf-8"/);
    expect(converted).toMatch(/converted from Windows-1252 to UTF-8/);
    expect((await readFile(file)).toString('utf8')).toBe('Noël → janvier\n');
  });
});
