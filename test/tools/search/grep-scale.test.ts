import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrepTool } from '../../../src/tools/search/grep.js';
import { compileScanRegex, scanFiles } from '../../../src/tools/search/grep-fallback.js';
import {
  comparePaths,
  GrepCollector,
  type GrepLimits,
  type SearchEnd,
} from '../../../src/tools/search/grep-output.js';
import { searchWithRipgrep } from '../../../src/tools/search/grep-ripgrep.js';
import { findRipgrep } from '../../../src/tools/search/ripgrep.js';
import { searchScope } from '../../../src/tools/search/scope.js';
import { walkFiles } from '../../../src/tools/search/walk.js';
import type { ToolContext } from '../../../src/tools/types.js';
import { makeToolContext } from '../../support/tool-context.js';
import { waitUntil } from '../../support/wait.js';
import { writeIn } from './helpers.js';

// Trees big enough that reads finish out of order and ripgrep's threads find files in any order:
// the engines must still print exactly what a line-by-line search would.

const rgPath = findRipgrep(process.env.PATH ?? '');
const CHUNK = 64 * 1024;
const UNLIMITED = {
  maxMatches: 1e6,
  maxChars: 1e9,
  maxLineChars: 1e6,
  countLimit: 1e9,
  maxFileBytes: 1e9,
  maxLineBytes: 1e6,
};

let ws: string;
let ctx: ToolContext;

const write = (rel: string, content: string | Buffer) => writeIn(ws, rel, content);

/** A deterministic stream of numbers in [0, 1). */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

/** Text that puts chosen lines across the 64 KB read boundaries. */
function crossingChunks(): string {
  let text = '';
  let n = 0;
  const padTo = (offset: number) => {
    while (Buffer.byteLength(text) < offset - 40) text += `filler ${n++} lorem ipsum\n`;
    text += `${'p'.repeat(offset - Buffer.byteLength(text) - 1)}\n`;
  };
  padTo(CHUNK - 4);
  text += 'needle across the first boundary\n';
  padTo(2 * CHUNK - 1);
  text += 'é needle with its é split\n';
  padTo(3 * CHUNK - 'crlf needle'.length - 1);
  text += 'crlf needle\r\n';
  padTo(4 * CHUNK + 500);
  return `${text}last needle`;
}

beforeAll(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-grep-scale-')));
  ctx = makeToolContext(ws);
  const next = random(7);
  const words = ['needle', 'hay', 'stack', 'é', '✓', 'x1', 'x22', 'needle end', ' ', '\t'];
  const names = ['a', 'a-b', 'a.b', 'B', '_x', 'z', 'a0', 'ab'];
  for (let i = 0; i < 160; i++) {
    const lines: string[] = [];
    const count = Math.floor(next() * 30);
    for (let l = 0; l < count; l++) {
      let line = '';
      for (let w = Math.floor(next() * 6); w > 0; w--) line += words[Math.floor(next() * words.length)];
      lines.push(line);
    }
    const eol = next() < 0.2 ? '\r\n' : '\n';
    const dir = [names[i % names.length], names[Math.floor(i / 8) % names.length]].join('/');
    await write(`${dir}/f${i}.txt`, lines.join(eol) + (next() < 0.5 ? eol : ''));
  }
  await write('big/crossing.txt', crossingChunks());
  await write(
    'big/exact.txt',
    `${'y'.repeat(CHUNK - 'needle at the end\n'.length - 1)}\nneedle at the end\n`,
  );
  await write(
    'big/one-less.txt',
    `${'y'.repeat(CHUNK - 'needle at the end\n'.length - 2)}\nneedle at the end\n`,
  );
  await write(
    'big/sparse.txt',
    Array.from({ length: 40_000 }, (_, i) => (i % 9_973 === 5 ? `needle ${i}` : `hay ${i}`)).join('\n'),
  );
  await write(
    'big/late-nul.txt',
    Buffer.concat([Buffer.from('needle early\n'), Buffer.alloc(3 * CHUNK, 0x61), Buffer.from('\n\0\n')]),
  );
  let deep = 'deep';
  for (let d = 0; d < 12; d++) deep += `/d${d}`;
  await write(`${deep}/needle.txt`, 'needle deep down\n');
  for (let w = 0; w < 60; w++) await write(`wide/w${w}/n.txt`, w % 7 === 0 ? 'needle wide\n' : 'hay\n');
});

afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
});

/** Every regular file, depth-first in name order: what the walker must produce here (no ignore files). */
function listTree(dir = ws, rel = ''): string[] {
  const entries = readdirSync(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return entries.flatMap((e) => {
    const p = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) return listTree(path.join(dir, e.name), p);
    return e.isFile() ? [p] : [];
  });
}

/** A plain line-by-line grep over the whole tree, printed as rg would. */
function referenceGrep(pattern: string, context: number): string {
  const regex = compileScanRegex(pattern, false);
  const out: string[] = [];
  for (const file of listTree()) {
    const bytes = readFileSync(path.join(ws, file));
    if (bytes.includes(0)) continue;
    const lines = new TextDecoder().decode(bytes).split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    const texts = lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
    const matches = new Set(texts.flatMap((t, i) => (regex.test(t) ? [i] : [])));
    const shown = new Set<number>();
    for (const i of matches) {
      for (let j = Math.max(0, i - context); j <= Math.min(texts.length - 1, i + context); j++) shown.add(j);
    }
    let prev = -1;
    for (const i of [...shown].sort((a, b) => a - b)) {
      if (context > 0 && out.length > 0 && (prev === -1 || i !== prev + 1)) out.push('--');
      const sep = matches.has(i) ? ':' : '-';
      out.push(`${file}${sep}${i + 1}${sep}${texts[i]}`);
      prev = i;
    }
  }
  return out.join('\n');
}

async function grep(
  engine: 'scan' | 'ripgrep',
  pattern: string,
  context: number,
  where?: string,
): Promise<string> {
  const tool = createGrepTool({ engine, ...UNLIMITED });
  const out = await tool.run(tool.parameters.parse({ pattern, context, path: where }), ctx);
  return typeof out === 'string' ? out : out.output;
}

const patterns = ['needle', '^needle', 'needle$', 'é needle|✓', 'x\\d+$', '^$', 'needle end|hay$'];

describe('grep over many and large files', () => {
  it('walks in name order, batches concatenated, with directories read ahead', async () => {
    const walked: string[] = [];
    for await (const batch of walkFiles({ scope: await searchScope(ws, ws), signal: ctx.signal })) {
      for (const file of batch) walked.push(file.path);
    }
    expect(walked).toEqual(listTree());
    const filtered: string[] = [];
    const sub = path.join(ws, 'a');
    const filter = (rel: string) => rel.endsWith('5.txt');
    const scope = await searchScope(ws, sub);
    for await (const batch of walkFiles({ scope, signal: ctx.signal, filter })) {
      for (const file of batch) filtered.push(file.path);
    }
    expect(filtered).toEqual(listTree(sub, 'a').filter((p) => p.endsWith('5.txt')));
  });

  it.each(patterns.flatMap((p) => [0, 2].map((c) => [p, c] as const)))(
    'scan prints what a line-by-line grep does: %s, context %i',
    async (pattern, context) => {
      expect(await grep('scan', pattern, context)).toBe(referenceGrep(pattern, context));
    },
  );

  it('tests a look-around at a line edge on the line alone', async () => {
    for (const pattern of ['(?<![a-z ])needle', 'needle(?!\\s)', '(?<=^)hay']) {
      expect(await grep('scan', pattern, 1)).toBe(referenceGrep(pattern, 1));
    }
  });

  it.skipIf(!rgPath).each(patterns)('ripgrep prints the same: %s', async (pattern) => {
    expect(await grep('ripgrep', pattern, 1)).toBe(referenceGrep(pattern, 1));
  });

  it.skipIf(!rgPath)('drops a file with a late NUL byte in a batch of a few files too', async () => {
    const rg = await grep('ripgrep', 'needle', 0, 'big');
    expect(rg).not.toContain('late-nul');
    expect(rg).toBe(await grep('scan', 'needle', 0, 'big'));
  });

  it.skipIf(!rgPath)(
    'prints in walk order whatever order rg finds files in, and stops at the count limit',
    async () => {
      const run = async (engine: 'scan' | 'ripgrep', pattern: string, countLimit: number) => {
        const limits: GrepLimits = { ...UNLIMITED, countLimit, context: 1 };
        const collector = new GrepCollector(limits);
        const scope = await searchScope(ws, ws);
        const common = {
          pattern,
          ignoreCase: false,
          limits,
          collector,
          signal: ctx.signal,
          deadline: Date.now() + 30_000,
        };
        const end: SearchEnd =
          engine === 'scan'
            ? await scanFiles(walkFiles({ scope, signal: ctx.signal }), common)
            : await searchWithRipgrep({ ...common, rgPath: rgPath!, workspace: ws, target: { scope } });
        return { end, output: collector.render(), matches: collector.totalMatches };
      };
      const all = await run('ripgrep', 'needle', 1e9);
      expect(all.end).toBe('complete');
      expect(all.output).toBe(referenceGrep('needle', 1));
      // Most lines matching: many files, and much output, from several threads at once.
      const busy = await run('ripgrep', '1|m', 1e9);
      expect(busy.matches).toBeGreaterThan(20_000);
      expect(busy).toEqual(await run('scan', '1|m', 1e9));
      // Which files rg had searched when it was stopped depends on its threads; what it shows is
      // still in walk order, and every line is one the full search shows.
      const some = await run('ripgrep', 'needle', 40);
      expect(some.end).toBe('limit');
      expect(some.matches).toBeGreaterThanOrEqual(40);
      const shown = some.output.split('\n').filter((l) => l !== '--');
      const full = new Set(all.output.split('\n'));
      for (const line of shown) expect(full.has(line)).toBe(true);
      const paths = shown.map((l) => l.slice(0, l.search(/[:-]\d+[:-]/)));
      expect([...paths].sort(comparePaths)).toEqual(paths);
    },
  );

  it.skipIf(!existsSync('/proc/self/fd'))('closes every file when it stops early or is aborted', async () => {
    const openFds = async () => (await readdir('/proc/self/fd')).length;
    const before = await openFds();
    const tool = createGrepTool({ engine: 'scan', countLimit: 1 });
    await tool.run({ pattern: 'needle|y' }, ctx);
    const controller = new AbortController();
    const aborted = tool.run({ pattern: 'needle' }, makeToolContext(ws, { signal: controller.signal }));
    setImmediate(() => controller.abort());
    await expect(aborted).rejects.toThrow();
    // Reads already under way finish in the background and close their files then.
    await waitUntil(async () => (await openFds()) <= before, `open files to drop back to ${before}`);
  });

  it('searches a file named by path that spans several chunks', async () => {
    expect(await grep('scan', 'needle', 0, 'big/crossing.txt')).toBe(
      [
        'big/crossing.txt:2778:needle across the first boundary',
        'big/crossing.txt:5508:é needle with its é split',
        'big/crossing.txt:8238:crlf needle',
        'big/crossing.txt:10951:last needle',
      ].join('\n'),
    );
  });
});
