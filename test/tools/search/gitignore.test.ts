import { execFileSync } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isIgnored, matchIgnoreRules, parseIgnoreFile } from '../../../src/tools/search/gitignore.js';
import { createGlobTool } from '../../../src/tools/search/glob.js';
import { makeToolContext } from '../../support/tool-context.js';
import { hasRipgrep, writeIn } from './helpers.js';

function verdict(rules: string, rel: string, isDir = false): boolean | undefined {
  const name = rel.slice(rel.lastIndexOf('/') + 1);
  return matchIgnoreRules(parseIgnoreFile(rules), rel, name, isDir);
}

describe('gitignore rules', () => {
  it('matches a slash-free pattern by name at any depth', () => {
    expect(verdict('*.log', 'a.log')).toBe(true);
    expect(verdict('*.log', 'deep/down/a.log')).toBe(true);
    expect(verdict('*.log', 'a.txt')).toBeUndefined();
  });

  it('anchors a pattern with a leading or inner slash to its own directory', () => {
    expect(verdict('/secret.txt', 'secret.txt')).toBe(true);
    expect(verdict('/secret.txt', 'src/secret.txt')).toBeUndefined();
    expect(verdict('docs/*.md', 'docs/a.md')).toBe(true);
    expect(verdict('docs/*.md', 'x/docs/a.md')).toBeUndefined();
    expect(verdict('docs/*.md', 'docs/sub/a.md')).toBeUndefined();
  });

  it('applies a trailing slash to directories only', () => {
    expect(verdict('build/', 'build', true)).toBe(true);
    expect(verdict('build/', 'build', false)).toBeUndefined();
  });

  it('handles ** at the start, in the middle and at the end', () => {
    expect(verdict('**/gen', 'a/b/gen', true)).toBe(true);
    expect(verdict('**/gen', 'gen', true)).toBe(true);
    expect(verdict('a/**/b', 'a/b')).toBe(true);
    expect(verdict('a/**/b', 'a/x/y/b')).toBe(true);
    expect(verdict('out/**', 'out/x/y.js')).toBe(true);
    expect(verdict('out/**', 'out', true)).toBeUndefined();
  });

  it('lets the last matching rule win, so ! re-includes', () => {
    expect(verdict('*.log\n!keep.log', 'keep.log')).toBe(false);
    expect(verdict('!keep.log\n*.log', 'keep.log')).toBe(true);
  });

  it('takes parentheses, plus signs and escapes literally, and skips comments and blanks', () => {
    expect(verdict('foo(bar).txt', 'foo(bar).txt')).toBe(true);
    expect(verdict('+(x)', '+(x)')).toBe(true);
    expect(verdict('\\#hash', '#hash')).toBe(true);
    expect(verdict('\\!bang', '!bang')).toBe(true);
    expect(verdict('# comment\n\n   \n', 'comment')).toBeUndefined();
    expect(verdict('trailing   ', 'trailing')).toBe(true);
  });

  it('supports bracket classes, negated ones included, never matching a slash', () => {
    expect(verdict('file[0-9].txt', 'file3.txt')).toBe(true);
    expect(verdict('file[!0-9].txt', 'fileA.txt')).toBe(true);
    expect(verdict('file[!0-9].txt', 'file3.txt')).toBeUndefined();
    expect(verdict('a[!x]b', 'a/b')).toBeUndefined();
    expect(verdict('[', '[')).toBe(true);
  });

  it('gives deeper files precedence and consults exclude files last', () => {
    const root = { prefix: '', rules: parseIgnoreFile('*.log') };
    const nested = { prefix: 'src/', rules: parseIgnoreFile('!keep.log') };
    const exclude = { prefix: '', rules: parseIgnoreFile('*.txt\n!src/keep.log') };
    expect(isIgnored([root, nested], [exclude], 'src/keep.log', 'keep.log', false)).toBe(false);
    expect(isIgnored([root, nested], [exclude], 'src/other.log', 'other.log', false)).toBe(true);
    expect(isIgnored([root, nested], [exclude], 'notes.txt', 'notes.txt', false)).toBe(true);
    expect(isIgnored([root], [], 'README.md', 'README.md', false)).toBe(false);
  });
});

// The walker's matcher against git itself and against ripgrep, over one tree of awkward rules:
// all three must leave out the same files.
describe('the walker ignores what git and ripgrep ignore', () => {
  let root: string;
  let ws: string;
  let gitListed: string[];
  const rules = [
    '# a comment',
    '\\#hash.txt',
    'foo(bar).txt',
    '+(x).txt',
    '*.log',
    '!keep.log',
    'build/',
    '/root-only.txt',
    'docs/**/draft.md',
    '**/gen',
    'a/**/b.txt',
    'file[0-9].txt',
    'name[!a-c].txt',
    'trailing.txt   ',
    'sub/*.tmp',
  ];
  const files = [
    '#hash.txt',
    'foo(bar).txt',
    '+(x).txt',
    'x.log',
    'keep.log',
    'sub/keep.log',
    'sub/y.log',
    'build/out.txt',
    'sub/build/out.txt',
    'root-only.txt',
    'sub/root-only.txt',
    'docs/draft.md',
    'docs/a/b/draft.md',
    'other/docs/draft.md',
    'gen/y.txt',
    'sub/gen/x.txt',
    'a/b.txt',
    'a/x/y/b.txt',
    'c/a/b.txt',
    'file3.txt',
    'fileA.txt',
    'namea.txt',
    'namez.txt',
    'trailing.txt',
    'sub/z.tmp',
    'sub/deeper/z.tmp',
    'sub/nested/.gitignore',
    'sub/nested/kept.txt',
    'sub/nested/dropped.md',
    'ok.txt',
  ];

  beforeAll(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-ignore-')));
    ws = path.join(root, 'ws');
    for (const f of files) await writeIn(ws, f, f.endsWith('.gitignore') ? '*.md\n' : 'x\n');
    await writeIn(ws, '.gitignore', `${rules.join('\n')}\n`);
    await writeIn(ws, '.git/info/exclude', 'ok.txt\n');
    const env = { PATH: process.env.PATH, HOME: root, XDG_CONFIG_HOME: root, GIT_CONFIG_NOSYSTEM: '1' };
    execFileSync('git', ['init', '-q'], { cwd: ws, env, stdio: 'ignore' });
    gitListed = execFileSync('git', ['ls-files', '--others', '--exclude-standard', '-z'], { cwd: ws, env })
      .toString()
      .split('\0')
      .filter((f) => f !== '');
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const listed = async (engine: 'scan' | 'ripgrep') => {
    const tool = createGlobTool({ engine, maxResults: 1000 });
    const out = await tool.run({ pattern: '**/*' }, makeToolContext(ws));
    return (typeof out === 'string' ? out : out.output).split('\n');
  };

  it('as git does', async () => {
    expect((await listed('scan')).sort()).toEqual(gitListed.sort());
    // What git itself keeps, so the comparison above is not between two empty lists.
    expect(gitListed.sort()).toEqual([
      '.gitignore',
      'c/a/b.txt',
      'fileA.txt',
      'keep.log',
      'namea.txt',
      'other/docs/draft.md',
      'sub/deeper/z.tmp',
      'sub/keep.log',
      'sub/nested/.gitignore',
      'sub/nested/kept.txt',
      'sub/root-only.txt',
    ]);
  });

  it.skipIf(!hasRipgrep)('as ripgrep does', async () => {
    expect((await listed('ripgrep')).sort()).toEqual((await listed('scan')).sort());
  });
});
