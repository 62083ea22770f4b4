import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrepTool, type GrepToolOptions } from '../../../src/tools/search/grep.js';
import type { ToolContext, ToolOutput } from '../../../src/tools/types.js';
import { makeToolContext } from '../../support/tool-context.js';
import { hasRipgrep, writeIn } from './helpers.js';

// Issue 12: a 50 MB one-line file made grep use 2.5 GB and time out, and a 67 MB one was answered
// "No matches". Both engines now skip files over a size limit and read long lines only in part,
// and say so. Small limits keep most files here small; one test uses the real ones.

const SMALL: GrepToolOptions = { maxFileBytes: 100_000, maxLineBytes: 1_000 };

let ws: string;
let ctx: ToolContext;

const write = (rel: string, content: string | Buffer) => writeIn(ws, rel, content);

beforeAll(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-grep-caps-')));
  ctx = makeToolContext(ws);
  await write('big/huge.log', `${'needle\n'.repeat(20_000)}`);
  await write('big/also-huge.txt', `${'x'.repeat(150_000)} needle\n`);
  await write('big/small.txt', 'needle in a small file\n');
  // Lines around the 1,000-byte limit, the terminator counted as ripgrep counts it.
  await write('edge/at-limit.txt', `${'a'.repeat(993)}needle\n`);
  await write('edge/over-limit.txt', `${'a'.repeat(994)}needle\n`);
  await write('edge/crlf-over.txt', `${'a'.repeat(993)}needle\r\n`);
  await write('edge/last-line.txt', `${'a'.repeat(994)}needle`);
  await write(
    'long/early.txt',
    `before\nsome needle early ${'z'.repeat(5_000)}\nafter ${'q'.repeat(3_000)}\n`,
  );
  await write('long/late.txt', `${'z'.repeat(5_000)} needle late\n`);
  await write('long/window-edge.txt', `${'z'.repeat(600)}needle${'y'.repeat(5_000)}\n`);
  await write('long/wide.txt', `${'é'.repeat(300)}needle${'✓'.repeat(2_000)}\n`);
  await write('long/says-so.txt', 'needle [... 2 more matches]\n');
  await write('real/fifty.min.js', Buffer.alloc(50 * 1024 * 1024, 'needle;'));
  await write(
    'real/five.min.js',
    `${'var a=1;'.repeat(5 * 131_072)}needle;${'b'.repeat(100)}\nneedle on line two\n`,
  );
});

afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
});

async function grep(args: Record<string, unknown>, options: GrepToolOptions): Promise<ToolOutput> {
  const tool = createGrepTool(options);
  const out = await tool.run(tool.parameters.parse(args), ctx);
  return typeof out === 'string' ? { output: out } : out;
}

const engines = hasRipgrep ? (['scan', 'ripgrep'] as const) : (['scan'] as const);

describe.each(engines)('grep caps (%s)', (engine) => {
  const run = (args: Record<string, unknown>, options: GrepToolOptions = SMALL) =>
    grep(args, { ...options, engine });

  it('skips files over the size limit and names them', async () => {
    const r = await run({ pattern: 'needle', path: 'big' });
    expect(r.output).toBe(
      [
        'big/small.txt:1:needle in a small file',
        "[Skipped 2 files over 97.7 KB: big/also-huge.txt (146.5 KB), big/huge.log (136.7 KB). The shell's grep can search them.]",
      ].join('\n'),
    );
  });

  it('says what it skipped when nothing else matched', async () => {
    const r = await run({ pattern: 'needle', path: 'big', glob: '*.log' });
    expect(r.output).toBe(
      [
        'No matches for "needle" in big (files matching "*.log").',
        "[Skipped 1 file over 97.7 KB: big/huge.log (136.7 KB). The shell's grep can search it.]",
      ].join('\n'),
    );
  });

  it('does not search a file over the limit named by path', async () => {
    const r = await run({ pattern: 'needle', path: 'big/huge.log' });
    expect(r.output).toBe(
      "Not searched: big/huge.log is 136.7 KB, over the 97.7 KB grep reads. The shell's grep can search it.",
    );
  });

  it('counts the line terminator against the line limit, as ripgrep does', async () => {
    const r = await run({ pattern: 'needle', path: 'edge' });
    const tooFar = '[a line over 1000 B; its match is too far in to show]';
    expect(r.output).toBe(
      [
        `edge/at-limit.txt:1:…${'a'.repeat(294)}needle [line cut: 999 chars]`,
        `edge/crlf-over.txt:1:${tooFar}`,
        `edge/last-line.txt:1:…${'a'.repeat(294)}needle [line cut: 1,000 chars]`,
        `edge/over-limit.txt:1:${tooFar}`,
      ].join('\n'),
    );
  });

  it('shows a long line only where its first part holds the match, and says it is long', async () => {
    const r = await run({ pattern: 'needle', path: 'long', context: 1 });
    const tooFar = '[a line over 1000 B; its match is too far in to show]';
    expect(r.output).toBe(
      [
        'long/early.txt-1-before',
        `long/early.txt:2:some needle early ${'z'.repeat(282)}… [line cut: over 1000 B]`,
        `long/early.txt-3-after ${'q'.repeat(294)}… [line cut: over 1000 B]`,
        '--',
        `long/late.txt:1:${tooFar}`,
        '--',
        // Text that reads like ripgrep's note on a long line, but is short: shown as it is.
        'long/says-so.txt:1:needle [... 2 more matches]',
        '--',
        // 300 two-byte characters before the match put the window past the first 1,000 bytes.
        `long/wide.txt:1:${tooFar}`,
        '--',
        `long/window-edge.txt:1:…${'z'.repeat(60)}needle${'y'.repeat(234)}… [line cut: over 1000 B]`,
      ].join('\n'),
    );
  });

  it('skips a 50 MB file and reads a 5 MB one-line file in part, with the real limits', async () => {
    const dir = 'real';
    const r = await run({ pattern: 'needle', path: dir }, {});
    expect(r.output).toBe(
      [
        `${dir}/five.min.js:1:[a line over 64.0 KB; its match is too far in to show]`,
        `${dir}/five.min.js:2:needle on line two`,
        `[Skipped 1 file over 16.0 MB: ${dir}/fifty.min.js (50.0 MB). The shell's grep can search it.]`,
      ].join('\n'),
    );
  });
});

describe.skipIf(!hasRipgrep)('grep caps: both engines', () => {
  it.each([
    ['big files', { pattern: 'needle', path: 'big' }],
    ['edges', { pattern: 'needle|a{990}', path: 'edge', context: 1 }],
    ['long lines with context', { pattern: 'needle|after|z', path: 'long', context: 2 }],
    ['case-insensitive in long lines', { pattern: 'NEEDLE', path: 'long', ignore_case: true }],
  ])('%s', async (_name, args) => {
    const rg = await grep(args, { ...SMALL, engine: 'ripgrep' });
    const scan = await grep(args, { ...SMALL, engine: 'scan' });
    expect(rg.output).toBe(scan.output);
  });
});
