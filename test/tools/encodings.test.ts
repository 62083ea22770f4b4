import { mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildRegistry } from '../../src/tools/catalog.js';
import { editFileTool } from '../../src/tools/edit/edit-file.js';
import { multiEditTool } from '../../src/tools/edit/multi-edit.js';
import { readFileTool } from '../../src/tools/fs/read-file.js';
import { writeFileTool } from '../../src/tools/fs/write-file.js';
import { createGrepTool, type GrepEngine } from '../../src/tools/search/grep.js';
import type { AnyTool, ToolContext, ToolOutput } from '../../src/tools/types.js';
import { makeToolContext } from '../support/tool-context.js';
import { hasRipgrep } from './search/helpers.js';

/** The file tools on text files that are not UTF-8: real files, real bytes on disk. */
let ws: string;
let ctx: ToolContext;

beforeEach(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-enc-')));
  ctx = makeToolContext(ws);
});

afterEach(async () => {
  await rm(ws, { recursive: true, force: true });
});

const latin1 = (s: string) => Buffer.from(s, 'latin1');
const utf16le = (s: string) => Buffer.from(`\ufeff${s}`, 'utf16le');
const utf16be = (s: string) => utf16le(s).swap16();
const put = (name: string, bytes: Buffer | string) => writeFile(path.join(ws, name), bytes);
const bytesOf = (name: string) => readFile(path.join(ws, name));

async function call(tool: AnyTool, args: Record<string, unknown>): Promise<ToolOutput> {
  const out = await tool.run(tool.parameters.parse(args), ctx);
  return typeof out === 'string' ? { output: out } : out;
}

async function failure(tool: AnyTool, args: Record<string, unknown>): Promise<string> {
  return call(tool, args).then(
    (r) => {
      throw new Error(`expected a failure, got ${r.output}`);
    },
    (err: Error) => err.message,
  );
}

describe('read_file', () => {
  it('reads "café" in Latin-1 bytes and says in which encoding', async () => {
    await put('menu.txt', latin1('café\n'));
    expect((await call(readFileTool, { path: 'menu.txt' })).output).toBe(
      '[Read as Windows-1252, not UTF-8; edits and writes keep it.]\n   1\tcafé',
    );
  });

  it('says nothing of the encoding of UTF-8, with or without a BOM', async () => {
    await put('a.txt', 'café\n');
    await put('b.txt', '\ufeffcafé\n');
    expect((await call(readFileTool, { path: 'a.txt' })).output).toBe('   1\tcafé');
    expect((await call(readFileTool, { path: 'b.txt' })).output).toBe('   1\tcafé');
  });

  it('names the encoding of each file in a multi-file read', async () => {
    await put('w.txt', utf16le('wide\n'));
    await put('n.txt', 'narrow\n');
    const r = await call(readFileTool, { paths: ['w.txt', 'n.txt'] });
    expect(r.output).toBe(
      '==> w.txt <==\n[Read as UTF-16LE, not UTF-8; edits and writes keep it.]\n   1\twide\n\n==> n.txt <==\n   1\tnarrow',
    );
  });

  it('still refuses binary files, with or without NUL bytes', async () => {
    await put('a.out', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0]));
    await put('blob.gz', Buffer.from(Array.from({ length: 300 }, (_, i) => 1 + ((i * 97) % 255))));
    for (const name of ['a.out', 'blob.gz'])
      expect(await failure(readFileTool, { path: name })).toMatch(/it looks like a binary file/);
  });
});

describe('edit_file and multi_edit', () => {
  it('edit a Latin-1 CRLF file and write it back in Latin-1 with CRLF', async () => {
    await put('menu.txt', latin1('Menu\r\ncafé\r\ncrème brûlée\r\n'));
    const r = await call(editFileTool, {
      path: 'menu.txt',
      old_string: 'crème brûlée',
      new_string: 'tarte à la crème',
    });
    expect(r.output.split('\n')[0]).toBe('Edited menu.txt in Windows-1252 (strategy: exact, line 3)');
    expect(r.meta).toMatchObject({ encoding: 'windows-1252' });
    expect(await bytesOf('menu.txt')).toEqual(latin1('Menu\r\ncafé\r\ntarte à la crème\r\n'));

    await call(multiEditTool, {
      path: 'menu.txt',
      edits: [
        { old_string: 'café', new_string: 'thé' },
        { old_string: 'Menu\n', new_string: 'Carte\n' },
      ],
    });
    expect(await bytesOf('menu.txt')).toEqual(latin1('Carte\r\nthé\r\ntarte à la crème\r\n'));
  });

  it('keeps Windows-1252 smart quotes and the euro sign as their single bytes', async () => {
    await put('q.txt', latin1('He said \x93hi\x94 \x96 2\x80\n'));
    await call(editFileTool, { path: 'q.txt', old_string: '“hi”', new_string: '‘bye’ …' });
    expect(await bytesOf('q.txt')).toEqual(latin1('He said \x91bye\x92 \x85 \x96 2\x80\n'));
  });

  it('keeps bytes an edit does not touch, even of a file in another 8-bit encoding', async () => {
    // "Привет" in Windows-1251 reads as Windows-1252 letters; the edit elsewhere leaves its bytes as they were.
    const cyrillic = Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]);
    await put('ru.txt', Buffer.concat([Buffer.from('x = 1 # '), cyrillic, Buffer.from('\n')]));
    await call(editFileTool, { path: 'ru.txt', old_string: 'x = 1', new_string: 'x = 2' });
    expect(await bytesOf('ru.txt')).toEqual(
      Buffer.concat([Buffer.from('x = 2 # '), cyrillic, Buffer.from('\n')]),
    );
  });

  it('edits UTF-16 LE and BE files with their BOM and CRLF', async () => {
    await put('le.txt', utf16le('one\r\ntwo\r\n'));
    await put('be.txt', utf16be('one\r\ntwo\r\n'));
    const le = await call(editFileTool, { path: 'le.txt', old_string: 'two', new_string: 'deux €' });
    await call(editFileTool, { path: 'be.txt', old_string: 'two', new_string: 'deux €' });
    expect(le.output.split('\n')[0]).toMatch(/^Edited le\.txt in UTF-16LE/);
    expect(await bytesOf('le.txt')).toEqual(utf16le('one\r\ndeux €\r\n'));
    expect(await bytesOf('be.txt')).toEqual(utf16be('one\r\ndeux €\r\n'));
  });

  it('refuses characters the encoding lacks, naming them and the option, and writes nothing', async () => {
    const before = latin1('café\nnaïve\n');
    await put('l.txt', before);
    const message = await failure(editFileTool, {
      path: 'l.txt',
      old_string: 'naïve',
      new_string: 'naïve → ✓ → 😀',
    });
    expect(message).toBe(
      'Cannot edit l.txt: it is Windows-1252 text, which has no "→", "✓" or "😀" (line 2). ' +
        'Use characters it has, or pass encoding "utf-8" to convert the file to UTF-8.',
    );
    expect(await bytesOf('l.txt')).toEqual(before);
    expect(
      await failure(multiEditTool, { path: 'l.txt', edits: [{ old_string: 'café', new_string: 'café ☕' }] }),
    ).toMatch(/which has no "☕" \(line 1\)/);
    expect(await bytesOf('l.txt')).toEqual(before);
  });

  it('converts the file to another encoding when told to', async () => {
    await put('l.txt', latin1('café\r\n'));
    const r = await call(editFileTool, {
      path: 'l.txt',
      old_string: 'café',
      new_string: 'café ☕',
      encoding: 'UTF-8',
    });
    expect(r.output.split('\n')[0]).toMatch(/^Edited l\.txt \(converted from Windows-1252 to UTF-8\)/);
    expect((await bytesOf('l.txt')).toString('utf8')).toBe('café ☕\r\n');
  });

  it('rejects an encoding it does not know, saying which it does', () => {
    const parsed = editFileTool.parameters.safeParse({
      path: 'a',
      old_string: 'a',
      new_string: 'b',
      encoding: 'ebcdic',
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe(
      'Unknown encoding "ebcdic"; use utf-8, windows-1252 (latin-1), utf-16le or utf-16be.',
    );
  });

  it('previews an edit of a Latin-1 file as it will apply', async () => {
    await put('l.txt', latin1('café\n'));
    const preview = await editFileTool.preview!(
      { path: 'l.txt', old_string: 'café', new_string: 'thé' },
      ctx,
    );
    expect(preview).toContain('-café');
    expect(preview).toContain('+thé');
  });
});

describe('write_file', () => {
  it('keeps the encoding and CRLF endings of the file it overwrites, and says so', async () => {
    await put('l.txt', latin1('vieux café\r\n'));
    const r = await call(writeFileTool, { path: 'l.txt', content: 'crème\nbrûlée\n' });
    expect(r.output).toBe(
      'Overwrote l.txt: wrote 2 lines (15 bytes) in Windows-1252, CRLF line endings kept.',
    );
    expect(await bytesOf('l.txt')).toEqual(latin1('crème\r\nbrûlée\r\n'));
    expect(r.display).toContain('+crème');
  });

  it('keeps UTF-16 with its BOM, and the BOM of a UTF-8 file', async () => {
    await put('w.txt', utf16be('old\n'));
    await call(writeFileTool, { path: 'w.txt', content: 'new\n' });
    expect(await bytesOf('w.txt')).toEqual(utf16be('new\n'));
    await put('b.csv', '\ufeffa;b\n');
    const r = await call(writeFileTool, { path: 'b.csv', content: 'é;b\n' });
    expect(r.output).toBe('Overwrote b.csv: wrote 1 line (8 bytes).');
    expect(await bytesOf('b.csv')).toEqual(Buffer.from('\ufeffé;b\n'));
  });

  it('writes new files as UTF-8 unless told otherwise', async () => {
    await call(writeFileTool, { path: 'u.txt', content: 'café\n' });
    expect(await bytesOf('u.txt')).toEqual(Buffer.from('café\n'));
    const r = await call(writeFileTool, { path: 'l.txt', content: 'café\n', encoding: 'latin1' });
    expect(r.output).toBe('Created l.txt: wrote 1 line (5 bytes) in Windows-1252.');
    expect(await bytesOf('l.txt')).toEqual(latin1('café\n'));
  });

  it('refuses characters the encoding lacks, leaving the file as it was, and converts when told', async () => {
    await put('l.txt', latin1('café\n'));
    expect(await failure(writeFileTool, { path: 'l.txt', content: 'ok\n→\n' })).toMatch(
      /^Cannot write l\.txt: it is Windows-1252 text, which has no "→" \(line 2\)\. .*pass encoding "utf-8"/,
    );
    expect(await bytesOf('l.txt')).toEqual(latin1('café\n'));
    const r = await call(writeFileTool, { path: 'l.txt', content: 'café →\n', encoding: 'utf-8' });
    expect(r.output).toBe('Overwrote l.txt: wrote 1 line (10 bytes) (converted from Windows-1252 to UTF-8).');
    expect(await bytesOf('l.txt')).toEqual(Buffer.from('café →\n'));
    expect(await readdir(ws)).toEqual(['l.txt']);
  });

  it('overwrites a binary file with the text as given', async () => {
    await put('x.bin', Buffer.from([0, 1, 2, 0xff]));
    await call(writeFileTool, { path: 'x.bin', content: 'text é\n' });
    expect(await bytesOf('x.bin')).toEqual(Buffer.from('text é\n'));
  });
});

describe('the encoding option', () => {
  it('costs no tokens: the write tools accept it, but it is not in the schemas sent', () => {
    const registry = buildRegistry();
    for (const name of ['write_file', 'edit_file', 'multi_edit']) {
      const schema = JSON.stringify(registry.schemaOf(name));
      expect(schema, name).toContain('"path"');
      expect(schema, name).not.toContain('encoding');
    }
  });
});

const engines: [string, GrepEngine][] = [
  ['the scan', 'scan'],
  ...(hasRipgrep ? [['ripgrep', 'ripgrep'] as [string, GrepEngine]] : []),
];
describe.each(engines)('grep with %s', (_, engine) => {
  it('searches a Latin-1 file rather than refusing it', async () => {
    await put('menu.txt', latin1('café\nthé vert\n'));
    const r = await call(createGrepTool({ engine }), { pattern: 'vert' });
    expect(r.output).toMatch(/^menu\.txt:2:th.* vert$/);
  });
});
