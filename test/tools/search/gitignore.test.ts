import { describe, expect, it } from 'vitest';
import { isIgnored, matchIgnoreRules, parseIgnoreFile } from '../../../src/tools/search/gitignore.js';

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
