import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { imageKind, imageSize } from '../../src/tools/fs/image.js';
import {
  READ_MAX_IMAGE_BYTES,
  READ_MAX_OUTPUT_BYTES,
  readFileTool,
  similarNames,
} from '../../src/tools/fs/read-file.js';
import type { ToolContext, ToolOutput } from '../../src/tools/types.js';
import { makeToolContext } from '../support/tool-context.js';

let ws: string;
let ctx: ToolContext;

beforeEach(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-read-')));
  ctx = makeToolContext(ws);
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

  it('reads a file that is not UTF-8 as Windows-1252, and says so first', async () => {
    await writeFile(
      path.join(ws, 'latin1.txt'),
      Buffer.from('caf\xe9 cr\xe8me\r\n\x93quoted\x94\r\n', 'latin1'),
    );
    const r = await read({ path: 'latin1.txt' });
    expect(r.output).toBe(
      '[Read as Windows-1252, not UTF-8; edits and writes keep it.]\n   1\tcafé crème\n   2\t“quoted”',
    );
    expect(r.meta).toMatchObject({ encoding: 'windows-1252', totalLines: 2 });
  });

  it('reads a file as Windows-1252 when its first byte that is not UTF-8 comes far into it', async () => {
    const good = Buffer.from(`${numbered(20_000)}\n`);
    await writeFile(path.join(ws, 'late.txt'), Buffer.concat([good, Buffer.from('na\xefve\n', 'latin1')]));
    const first = await read({ path: 'late.txt', limit: 5 });
    expect(first.output.split('\n')[0]).toMatch(/Windows-1252/);
    expect(first.output).toContain('   1\tline 1');
    expect((await read({ path: 'late.txt', offset: 20_001 })).output).toContain('20001\tnaïve');
  });

  it('reads UTF-16 with a BOM, little- and big-endian, across read chunks', async () => {
    const text = `${'x'.repeat(40_000)}\r\nÉtoile 日本\r\n`;
    await writeFile(path.join(ws, 'le.txt'), Buffer.from(`\ufeff${text}`, 'utf16le'));
    await writeFile(path.join(ws, 'be.txt'), Buffer.from(`\ufeff${text}`, 'utf16le').swap16());
    for (const [name, label] of [
      ['le.txt', 'UTF-16LE'],
      ['be.txt', 'UTF-16BE'],
    ]) {
      const r = await read({ path: name!, offset: 2 });
      expect(r.output).toBe(`[Read as ${label}, not UTF-8; edits and writes keep it.]\n   2\tÉtoile 日本`);
    }
  });

  it('refuses bytes that do not look like text in any encoding, and UTF-32', async () => {
    // No NUL byte, not UTF-8, and full of control bytes: compressed or random data.
    const noise = Buffer.from(Array.from({ length: 600 }, (_, i) => 1 + ((i * 131) % 255)));
    await writeFile(path.join(ws, 'noise.dat'), noise);
    await expect(read({ path: 'noise.dat' })).rejects.toThrow(
      'Cannot read noise.dat: it looks like a binary file',
    );
    await writeFile(path.join(ws, 'w32.txt'), Buffer.from([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0]));
    await expect(read({ path: 'w32.txt' })).rejects.toThrow(
      /it is UTF-32LE text, which Hearth does not read/,
    );
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

  it('wants exactly one of path and paths, and at most ten paths', () => {
    const oneOf = 'Give exactly one of path (one file) or paths (a list of files).';
    expect(() => readFileTool.parameters.parse({})).toThrow(oneOf);
    expect(() => readFileTool.parameters.parse({ path: 'a', paths: ['b'] })).toThrow(oneOf);
    expect(() => readFileTool.parameters.parse({ paths: [] })).toThrow();
    const eleven = Array.from({ length: 11 }, (_, i) => `f${i}`);
    expect(() => readFileTool.parameters.parse({ paths: eleven })).toThrow();
    expect(readFileTool.parameters.parse({ paths: eleven.slice(1) }).paths).toHaveLength(10);
  });
});

describe('read_file with several paths', () => {
  it('shows each file under a header, in the order asked', async () => {
    await writeFile(path.join(ws, 'a.txt'), 'alpha\n');
    await mkdir(path.join(ws, 'src'));
    await writeFile(path.join(ws, 'src', 'b.ts'), 'beta\ngamma\n');
    const r = await read({ paths: ['src/b.ts', './a.txt'] });
    expect(r.output).toBe('==> src/b.ts <==\n   1\tbeta\n   2\tgamma\n\n==> a.txt <==\n   1\talpha');
    expect(r.ok).toBe(true);
    expect(r.meta?.files).toMatchObject([{ path: 'src/b.ts', totalLines: 2 }, { path: 'a.txt' }]);
  });

  it('reports a failing file in its place and fails only when all do', async () => {
    await writeFile(path.join(ws, 'good.txt'), 'fine\n');
    await writeFile(path.join(ws, 'blob.bin'), Buffer.from([1, 0, 2]));
    const r = await read({ paths: ['missing.txt', 'good.txt', 'blob.bin', '../out.txt'] });
    expect(r.ok).toBe(true);
    expect(r.output).toBe(
      [
        '==> missing.txt <==\nFile not found: missing.txt',
        '==> good.txt <==\n   1\tfine',
        '==> blob.bin <==\nCannot read blob.bin: it looks like a binary file (3 B), not text.',
        `==> ../out.txt <==\nPath "../out.txt" is outside the workspace (${ws}). Use a path relative to the workspace root.`,
      ].join('\n\n'),
    );
    const none = await read({ paths: ['missing.txt', 'blob.bin'] });
    expect(none.ok).toBe(false);
  });

  it('splits the byte budget, giving what small files leave to the large ones', async () => {
    const line = 'w'.repeat(99);
    await writeFile(path.join(ws, 'big1.txt'), Array.from({ length: 2000 }, () => line).join('\n'));
    await writeFile(path.join(ws, 'big2.txt'), Array.from({ length: 2000 }, () => line).join('\n'));
    await writeFile(path.join(ws, 'small.txt'), 'tiny\n');
    const r = await read({ paths: ['big1.txt', 'small.txt', 'big2.txt'] });
    expect(Buffer.byteLength(r.output)).toBeLessThanOrEqual(READ_MAX_OUTPUT_BYTES + 200);
    expect(r.output).toContain('==> small.txt <==\n   1\ttiny\n\n==> big2.txt <==');
    const shown = [
      ...r.output.matchAll(
        /\[Showing lines 1-(\d+) of 2,000\. Read it alone with offset=(\d+) to continue\.\]/g,
      ),
    ];
    expect(shown).toHaveLength(2);
    for (const m of shown) {
      expect(Number(m[2])).toBe(Number(m[1]) + 1);
      // Each big file gets about half the budget, not a third.
      expect(Number(m[1])).toBeGreaterThan(200);
    }
  });

  it('treats a single-element list as a plain read, offset included', async () => {
    await writeFile(path.join(ws, 'n.txt'), numbered(10));
    const r = await read({ paths: ['n.txt'], offset: 9 });
    expect(r.output).toBe('   9\tline 9\n  10\tline 10');
  });

  it('says that offset and limit were ignored for several files', async () => {
    await writeFile(path.join(ws, 'a.txt'), 'a\n');
    await writeFile(path.join(ws, 'b.txt'), 'b\n');
    const r = await read({ paths: ['a.txt', 'b.txt', 'a.txt'], offset: 5 });
    expect(r.output).toBe(
      '==> a.txt <==\n   1\ta\n\n==> b.txt <==\n   1\tb\n\n[offset and limit apply to a single path and were ignored.]',
    );
  });
});

function png(width: number, height: number): Buffer {
  const b = Buffer.alloc(64);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b;
}

function gif(width: number, height: number): Buffer {
  const b = Buffer.alloc(32);
  b.write('GIF89a', 0, 'latin1');
  b.writeUInt16LE(width, 6);
  b.writeUInt16LE(height, 8);
  return b;
}

/** SOI, an APP0 segment, a DHT segment (C4, which is not a frame header), fill bytes, then SOF2. */
function jpeg(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const dht = Buffer.from([0xff, 0xc4, 0x00, 0x05, 0, 0, 0]);
  const sof = Buffer.alloc(19);
  sof.writeUInt16BE(0xffc2, 0);
  sof.writeUInt16BE(17, 2);
  sof[4] = 8;
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    app0,
    dht,
    Buffer.from([0xff]),
    sof,
    Buffer.from([0xff, 0xd9]),
  ]);
}

function webp(chunk: 'VP8X' | 'VP8 ' | 'VP8L', width: number, height: number): Buffer {
  const b = Buffer.alloc(40);
  b.write('RIFF', 0, 'latin1');
  b.writeUInt32LE(32, 4);
  b.write('WEBP', 8, 'latin1');
  b.write(chunk, 12, 'latin1');
  b.writeUInt32LE(20, 16);
  if (chunk === 'VP8X') {
    b.writeUIntLE(width - 1, 24, 3);
    b.writeUIntLE(height - 1, 27, 3);
  } else if (chunk === 'VP8 ') {
    Buffer.from([0x9d, 0x01, 0x2a]).copy(b, 23);
    // The top two bits hold a scaling factor, which is not part of the size.
    b.writeUInt16LE(width | 0x4000, 26);
    b.writeUInt16LE(height | 0x8000, 28);
  } else {
    b[20] = 0x2f;
    b.writeUInt32LE((width - 1) | ((height - 1) << 14), 21);
  }
  return b;
}

function bmp(width: number, height: number): Buffer {
  const b = Buffer.alloc(54);
  b.write('BM', 0, 'latin1');
  b.writeUInt32LE(40, 14);
  b.writeInt32LE(width, 18);
  b.writeInt32LE(-height, 22);
  return b;
}

describe('read_file images', () => {
  it('attaches an image with its format, size and dimensions', async () => {
    const bytes = png(640, 480);
    await writeFile(path.join(ws, 'shot.png'), bytes);
    const r = await read({ path: 'shot.png' });
    expect(r.output).toBe('Image shot.png (PNG, 640x480, 64 B) attached.');
    expect(r.ok).toBeUndefined();
    expect(r.meta).toMatchObject({ path: 'shot.png', mimeType: 'image/png', width: 640, height: 480 });
    expect(r.meta?.attachments).toEqual([
      { path: 'shot.png', mimeType: 'image/png', base64: bytes.toString('base64') },
    ]);
  });

  it('reads the dimensions of each format', async () => {
    const cases: [string, Buffer, string][] = [
      ['a.gif', gif(320, 200), 'GIF, 320x200'],
      ['a.jpg', jpeg(1920, 1080), 'JPEG, 1920x1080'],
      ['a.jpeg', jpeg(7, 9), 'JPEG, 7x9'],
      ['x.webp', webp('VP8X', 4000, 3000), 'WEBP, 4000x3000'],
      ['y.webp', webp('VP8 ', 800, 600), 'WEBP, 800x600'],
      ['z.webp', webp('VP8L', 16383, 2), 'WEBP, 16383x2'],
      ['a.bmp', bmp(33, 44), 'BMP, 33x44'],
      ['UPPER.PNG', png(1, 1), 'PNG, 1x1'],
    ];
    for (const [name, bytes, label] of cases) {
      await writeFile(path.join(ws, name), bytes);
      expect((await read({ path: name })).output).toMatch(`Image ${name} (${label}, `);
    }
  });

  it('names the format the bytes hold and leaves out dimensions it cannot read', async () => {
    await writeFile(path.join(ws, 'photo.png'), jpeg(10, 20));
    const jpegInPng = await read({ path: 'photo.png' });
    expect(jpegInPng.output).toBe('Image photo.png (JPEG, 10x20, 49 B) attached.');
    expect(jpegInPng.meta?.attachments).toMatchObject([{ mimeType: 'image/jpeg' }]);

    await writeFile(path.join(ws, 'odd.png'), png(0, 0));
    expect((await read({ path: 'odd.png' })).output).toBe('Image odd.png (PNG, 64 B) attached.');
    expect(imageSize(Buffer.from([0xff, 0xd8, 0xff, 0xda, 0, 2]), 'jpeg')).toBeUndefined();
  });

  it('needs both an image extension and image bytes', async () => {
    await writeFile(path.join(ws, 'fake.png'), 'not an image\n');
    expect((await read({ path: 'fake.png' })).output).toBe('   1\tnot an image');
    await writeFile(path.join(ws, 'data.bin'), png(5, 5));
    await expect(read({ path: 'data.bin' })).rejects.toThrow(/binary file/);
    expect(imageKind(Buffer.from('GIF87a'))).toBe('gif');
    expect(imageKind(Buffer.from('BM'))).toBeUndefined();
  });

  it('refuses images over the size limit', async () => {
    const big = Buffer.alloc(READ_MAX_IMAGE_BYTES + 1);
    png(100, 100).copy(big);
    await writeFile(path.join(ws, 'huge.png'), big);
    await expect(read({ path: 'huge.png' })).rejects.toThrow(
      'Cannot attach huge.png: the PNG image is 25.0 MB, over the 25.0 MB limit.',
    );
  });

  it('attaches images among several files', async () => {
    await writeFile(path.join(ws, 'a.gif'), gif(2, 3));
    await writeFile(path.join(ws, 'notes.md'), '# hi\n');
    const r = await read({ paths: ['notes.md', 'a.gif'] });
    expect(r.output).toBe(
      '==> notes.md <==\n   1\t# hi\n\n==> a.gif <==\nImage a.gif (GIF, 2x3, 32 B) attached.',
    );
    expect(r.meta?.attachments).toEqual([
      { path: 'a.gif', mimeType: 'image/gif', base64: gif(2, 3).toString('base64') },
    ]);
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
