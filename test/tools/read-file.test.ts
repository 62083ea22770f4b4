import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileTool, similarNames } from '../../src/tools/fs/read-file.js';
import { MemoryState, type ToolContext, type ToolOutput } from '../../src/tools/types.js';

let ws: string;
let ctx: ToolContext;

beforeEach(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-read-')));
  ctx = { workspace: ws, signal: new AbortController().signal, session: new Map(), state: new MemoryState() };
});

afterEach(async () => {
  await rm(ws, { recursive: true, force: true });
});

async function read(args: Record<string, unknown>): Promise<ToolOutput> {
  const out = await readFileTool.run(readFileTool.parameters.parse(args), ctx);
  return typeof out === 'string' ? { output: out } : out;
}

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n');

describe('read_file', () => {
  it('numbers lines with a right-aligned number and a tab', async () => {
    await writeFile(path.join(ws, 'a.txt'), 'alpha\nbeta\n');
    const r = await read({ path: 'a.txt' });
    expect(r.output).toBe('   1\talpha\n   2\tbeta');
    expect(r.ok).toBeUndefined();
  });

  it('strips the carriage return of CRLF lines and a UTF-8 byte-order mark', async () => {
    await writeFile(path.join(ws, 'crlf.txt'), '\ufeffone\r\ntwo\r\n');
    expect((await read({ path: 'crlf.txt' })).output).toBe('   1\tone\n   2\ttwo');
  });

  it('pages with offset and limit and says how to continue', async () => {
    await writeFile(path.join(ws, 'big.txt'), numbered(5000));
    const first = await read({ path: 'big.txt' });
    const lines = first.output.split('\n');
    expect(lines).toHaveLength(2001);
    expect(lines[0]).toBe('   1\tline 1');
    expect(lines[1999]).toBe('2000\tline 2000');
    expect(lines[2000]).toBe('[Showing lines 1-2000 of 5,000. Use offset=2001 to continue.]');

    const middle = await read({ path: 'big.txt', offset: 2001, limit: 3 });
    expect(middle.output).toBe(
      '2001\tline 2001\n2002\tline 2002\n2003\tline 2003\n[Showing lines 2001-2003 of 5,000. Use offset=2004 to continue.]',
    );

    const last = await read({ path: 'big.txt', offset: 4999 });
    expect(last.output).toBe('4999\tline 4999\n5000\tline 5000');
  });

  it('caps output at about 50 KB and points at the next line', async () => {
    const line = 'y'.repeat(999);
    await writeFile(path.join(ws, 'wide.txt'), Array.from({ length: 1000 }, () => line).join('\n'));
    const r = await read({ path: 'wide.txt' });
    expect(Buffer.byteLength(r.output)).toBeLessThanOrEqual(52 * 1024);
    const footer = r.output.split('\n').at(-1) ?? '';
    const match = /^\[Showing lines 1-(\d+) of 1,000\. Use offset=(\d+) to continue\.\]$/.exec(footer);
    expect(match).not.toBeNull();
    expect(Number(match?.[2])).toBe(Number(match?.[1]) + 1);
    expect(Number(match?.[1])).toBeGreaterThan(40);
  });

  it('handles a very large file with bounded output', async () => {
    await writeFile(path.join(ws, 'huge.txt'), numbered(300_000));
    const r = await read({ path: 'huge.txt', offset: 250_000, limit: 2 });
    expect(r.output).toBe(
      '250000\tline 250000\n250001\tline 250001\n[Showing lines 250000-250001 of 300,000. Use offset=250002 to continue.]',
    );
  });

  it('cuts long lines with a marker', async () => {
    await writeFile(path.join(ws, 'min.js'), `${'z'.repeat(5000)}\nshort`);
    const r = await read({ path: 'min.js' });
    const [first, second] = r.output.split('\n');
    expect(first).toBe(`   1\t${'z'.repeat(2000)} [... line cut: 5,000 characters in all]`);
    expect(second).toBe('   2\tshort');
  });

  it('refuses binary files, saying so and giving the size', async () => {
    await writeFile(path.join(ws, 'img.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    await expect(read({ path: 'img.png' })).rejects.toThrow(
      'Cannot read img.png: it looks like a binary file (7 B)',
    );
  });

  it('refuses files that are not valid UTF-8', async () => {
    await writeFile(path.join(ws, 'latin1.txt'), Buffer.from('caf\xe9 cr\xe8me\n', 'latin1'));
    await expect(read({ path: 'latin1.txt' })).rejects.toThrow(
      /latin1\.txt: it is not valid UTF-8 text \(11 B\)/,
    );
  });

  it('refuses invalid UTF-8 that appears only far into the file', async () => {
    const good = Buffer.from(`${numbered(20_000)}\n`);
    await writeFile(path.join(ws, 'late.txt'), Buffer.concat([good, Buffer.from([0xff, 0xfe, 0x0a])]));
    await expect(read({ path: 'late.txt', limit: 5 })).rejects.toThrow(/not valid UTF-8/);
  });

  it('reads multi-byte characters split across read chunks', async () => {
    const text = `${'a'.repeat(65_535)}é\n日本語\n`;
    await writeFile(path.join(ws, 'utf8.txt'), text);
    const r = await read({ path: 'utf8.txt', offset: 2 });
    expect(r.output).toBe('   2\t日本語');
  });

  it('reports a missing file with similar names from the same directory', async () => {
    await mkdir(path.join(ws, 'src'));
    await writeFile(path.join(ws, 'src', 'index.ts'), '');
    await writeFile(path.join(ws, 'src', 'index.test.ts'), '');
    await writeFile(path.join(ws, 'src', 'unrelated.md'), '');
    await expect(read({ path: 'src/index.js' })).rejects.toThrow(
      'File not found: src/index.js. Similar: src/index.ts',
    );
    await expect(read({ path: 'nothing-like-it.txt' })).rejects.toThrow(
      /^File not found: nothing-like-it\.txt$/,
    );
  });

  it('says a directory is a directory', async () => {
    await mkdir(path.join(ws, 'dir'));
    await expect(read({ path: 'dir' })).rejects.toThrow('dir is a directory, not a file. Use list_dir');
  });

  it('says when the offset is past the end', async () => {
    await writeFile(path.join(ws, 'short.txt'), 'a\nb\nc\n');
    await expect(read({ path: 'short.txt', offset: 10 })).rejects.toThrow(
      'Offset 10 is beyond the end of short.txt, which has 3 lines.',
    );
  });

  it('says an empty file is empty', async () => {
    await writeFile(path.join(ws, 'empty.txt'), '');
    expect((await read({ path: 'empty.txt' })).output).toBe('empty.txt is empty (0 bytes).');
  });

  it('refuses paths outside the workspace, including through symlinks', async () => {
    const outside = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-read-out-')));
    try {
      await writeFile(path.join(outside, 'secret.txt'), 'secret');
      await symlink(path.join(outside, 'secret.txt'), path.join(ws, 'link.txt'));
      await expect(read({ path: '../etc/passwd' })).rejects.toThrow(/outside the workspace/);
      await expect(read({ path: 'link.txt' })).rejects.toThrow(/symlink/);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('rejects invalid offsets and limits at validation', () => {
    expect(() => readFileTool.parameters.parse({ path: 'a', offset: 0 })).toThrow();
    expect(() => readFileTool.parameters.parse({ path: 'a', limit: 1.5 })).toThrow();
  });
});

describe('similarNames', () => {
  it('prefers same stem and small typos, at most three', () => {
    const names = ['config.ts', 'config.json', 'confg.ts', 'other.ts', 'Config.ts', 'conf.yaml'];
    expect(similarNames('config.ts', names)).toEqual(['config.ts', 'Config.ts', 'config.json']);
    expect(similarNames('readme.md', ['README.md', 'src'])).toEqual(['README.md']);
    expect(similarNames('zzz.ts', ['abc.ts'])).toEqual([]);
  });
});
