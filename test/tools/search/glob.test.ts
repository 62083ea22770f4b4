import { mkdir, mkdtemp, realpath, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGlobTool, type GlobToolOptions, globTool } from '../../../src/tools/search/glob.js';
import { Mtimes } from '../../../src/tools/search/mtimes.js';
import type { ToolContext, ToolOutput } from '../../../src/tools/types.js';
import { makeToolContext } from '../../support/tool-context.js';
import { hasRipgrep, withFakeRipgrep } from './helpers.js';

let ws: string;
let outside: string;
let ctx: ToolContext;

async function write(rel: string, content = '', mtimeSeconds?: number): Promise<void> {
  const file = path.join(ws, rel);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
  // Every file gets a distinct, known time so newest-first order is deterministic.
  const t = mtimeSeconds ?? 1_600_000_000;
  await utimes(file, t, t);
}

beforeAll(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-glob-')));
  outside = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-glob-out-')));
  ctx = makeToolContext(ws);
  await write('.gitignore', '*.log\nbuild/\n/secret.md\n');
  await write('.git/info/exclude', 'excluded.ts\n');
  await write('.git/HEAD.ts', 'ref');
  await write('README.md', '', 1_600_000_100);
  await write('secret.md', '', 1_600_000_900);
  await write('docs/guide.md', '', 1_600_000_300);
  await write('docs/deep/more/notes.md', '', 1_600_000_200);
  await write('docs/secret.md', '', 1_600_000_050);
  await write('src/a.ts', '', 1_600_000_500);
  await write('src/b.ts', '', 1_600_000_500);
  await write('src/c.js', '', 1_600_000_400);
  await write('src/d.py', '', 1_600_000_600);
  await write('src/util/e.ts', '', 1_600_000_700);
  await write('src/gen/.gitignore', '*.ts\n!keep.ts\n');
  await write('src/gen/skip.ts', '', 1_600_000_800);
  await write('src/gen/keep.ts', '', 1_600_000_010);
  await write('excluded.ts', '');
  await write('debug.log', '');
  await write('build/out.ts', '');
  await write('node_modules/zod/index.ts', '');
  await write('node_modules/zod/README.md', '');
  await write('.github/workflows/ci.yml', '');
  await write(path.join('many', 'f.txt'));
  for (let i = 0; i < 7; i++) await write(`many/f${i}.txt`, '', 1_600_001_000 + i);
  await write(path.join('..', path.basename(outside), 'x.ts'));
  await symlink(outside, path.join(ws, 'link-out'));
});

afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

async function glob(args: Record<string, unknown>, tool = globTool): Promise<ToolOutput> {
  const out = await tool.run(tool.parameters.parse(args), ctx);
  return typeof out === 'string' ? { output: out } : out;
}

describe('glob', () => {
  it('lists files newest first, ties broken by path', async () => {
    const r = await glob({ pattern: 'src/**/*.ts' });
    expect(r.output).toBe(['src/util/e.ts', 'src/a.ts', 'src/b.ts', 'src/gen/keep.ts'].join('\n'));
  });

  it('matches a slash-free pattern against names at any depth', async () => {
    const r = await glob({ pattern: '*.md' });
    expect(r.output).toBe(
      ['docs/guide.md', 'docs/deep/more/notes.md', 'README.md', 'docs/secret.md'].join('\n'),
    );
  });

  it('supports braces and patterns relative to path', async () => {
    expect((await glob({ pattern: 'src/*.{js,ts}' })).output).toBe('src/a.ts\nsrc/b.ts\nsrc/c.js');
    expect((await glob({ pattern: '*.py', path: 'src' })).output).toBe('src/d.py');
    expect((await glob({ pattern: './util/*.ts', path: 'src' })).output).toBe('src/util/e.ts');
  });

  it('respects root and nested .gitignore files and .git/info/exclude, and skips .git and node_modules', async () => {
    const r = await glob({ pattern: '**/*' });
    const paths = r.output.split('\n');
    expect(paths).toContain('.gitignore');
    expect(paths).toContain('.github/workflows/ci.yml');
    expect(paths).toContain('src/gen/keep.ts');
    for (const hidden of [
      'secret.md',
      'debug.log',
      'build/out.ts',
      'excluded.ts',
      'src/gen/skip.ts',
      '.git/HEAD.ts',
      'node_modules/zod/index.ts',
    ]) {
      expect(paths).not.toContain(hidden);
    }
  });

  it('looks inside node_modules or an ignored directory when the pattern starts with it', async () => {
    expect((await glob({ pattern: 'node_modules/zod/*.ts' })).output).toBe('node_modules/zod/index.ts');
    expect((await glob({ pattern: 'build/**' })).output).toBe('build/out.ts');
  });

  it('does not follow symlinks out of the workspace', async () => {
    const r = await glob({ pattern: '**/x.ts' });
    expect(r.output).toMatch(/^No files match/);
  });

  it('caps the list and says how many were left out', async () => {
    const r = await glob({ pattern: 'many/*.txt' }, createGlobTool({ maxResults: 3 }));
    expect(r.output).toBe(
      [
        'many/f6.txt',
        'many/f5.txt',
        'many/f4.txt',
        '[3 of 8 files shown, newest first; 5 more left out. Narrow the pattern or path.]',
      ].join('\n'),
    );
    expect(r.meta).toMatchObject({ matches: 8, truncated: true });
  });

  it('says so when nothing matches, mentioning what is skipped', async () => {
    const r = await glob({ pattern: '*.rs' });
    expect(r.output).toBe(
      'No files match "*.rs" in . (files ignored by .gitignore, and .git/ and node_modules/, are skipped).',
    );
  });

  it('suggests /** when the pattern names a directory', async () => {
    const r = await glob({ pattern: 'docs' });
    expect(r.output).toMatch(/docs is a directory: use "docs\/\*\*" for the files in it\.$/);
  });

  it('accepts an absolute pattern inside the workspace', async () => {
    const r = await glob({ pattern: path.join(ws, 'src', '*.py') });
    expect(r.output).toBe('src/d.py');
  });

  it('refuses paths and patterns that leave the workspace', async () => {
    await expect(glob({ pattern: '*.ts', path: '..' })).rejects.toThrow(/outside the workspace/);
    await expect(glob({ pattern: '../*/x.ts' })).rejects.toThrow(/outside the workspace/);
    await expect(glob({ pattern: path.join(outside, '*.ts') })).rejects.toThrow(/absolute path outside/);
    await expect(glob({ pattern: '*.ts', path: 'src/a.ts' })).rejects.toThrow(/is a file/);
  });
});

describe('glob without ripgrep', () => {
  it('is chosen by HEARTH_NO_RIPGREP=1 and lists what ripgrep lists', async () => {
    const tool = createGlobTool({ env: { PATH: process.env.PATH, HEARTH_NO_RIPGREP: '1' } });
    expect((await glob({ pattern: 'src/**/*.ts' }, tool)).output).toBe(
      ['src/util/e.ts', 'src/a.ts', 'src/b.ts', 'src/gen/keep.ts'].join('\n'),
    );
  });

  it('walks the tree itself when the rg on PATH fails', async () => {
    const r = await withFakeRipgrep('#!/bin/sh\necho "error: unknown flag" >&2\nexit 2\n', (PATH) =>
      glob({ pattern: 'src/*.{js,ts}' }, createGlobTool({ env: { PATH } })),
    );
    expect(r.output).toBe('src/a.ts\nsrc/b.ts\nsrc/c.js');
  });

  it('leaves out what the exclude patterns name', async () => {
    const tool = createGlobTool({ engine: 'scan', exclude: ['*.ts', 'docs/deep/'] });
    expect((await glob({ pattern: 'src/*' }, tool)).output).toBe('src/d.py\nsrc/c.js');
    expect((await glob({ pattern: '*.md' }, tool)).output).toBe('docs/guide.md\nREADME.md\ndocs/secret.md');
  });
});

const cases: [string, Record<string, unknown>, GlobToolOptions?][] = [
  ['recursive', { pattern: 'src/**/*.ts' }],
  ['by name at any depth', { pattern: '*.md' }],
  ['braces', { pattern: 'src/*.{js,ts}' }],
  ['everything', { pattern: '**/*' }],
  ['relative to path', { pattern: './util/*.ts', path: 'src' }],
  ['inside node_modules', { pattern: 'node_modules/zod/*' }],
  ['inside an ignored directory', { pattern: 'build/**' }],
  ['not through a symlink', { pattern: '**/x.ts' }],
  ['capped', { pattern: 'many/*.txt' }, { maxResults: 3 }],
  ['a directory', { pattern: 'docs' }],
  ['character class', { pattern: '**/f[0-3].txt' }],
  ['excluded', { pattern: '**/*' }, { exclude: ['*.md', 'src/gen/', '.github'] }],
];

describe.skipIf(!hasRipgrep)('glob: ripgrep and the walker list the same', () => {
  it.each(cases)('%s', async (_name, args, options = {}) => {
    const rg = await glob(args, createGlobTool({ ...options, engine: 'ripgrep' }));
    const walker = await glob(args, createGlobTool({ ...options, engine: 'scan' }));
    expect(rg.output).toBe(walker.output);
  });
});

describe('Mtimes', () => {
  it('gives the same times from the thread pool as in line, leaving out deleted files', async () => {
    const files = ['README.md', 'src/a.ts', 'gone.txt', 'docs/guide.md'];
    const times = async (inlineSlackMs: number) => {
      const mtimes = new Mtimes(ws, new AbortController().signal, { inlineMs: 0, inlineSlackMs });
      for (const f of files) mtimes.add(f);
      return mtimes.all();
    };
    const inline = await times(1e9);
    expect(inline).toEqual([
      { path: 'README.md', mtime: 1_600_000_100_000 },
      { path: 'src/a.ts', mtime: 1_600_000_500_000 },
      { path: 'docs/guide.md', mtime: 1_600_000_300_000 },
    ]);
    // No budget for in-line calls: after the first, the rest go to the thread pool.
    expect(await times(0)).toEqual(inline);
    expect(await new Mtimes(ws, new AbortController().signal).all()).toBeUndefined();
  });
});
