import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffStats, unifiedDiff } from '../../../src/tools/edit/diff.js';

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`);
const text = (ls: string[]) => `${ls.join('\n')}\n`;

describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    expect(unifiedDiff('a.txt', 'x\n', 'x\n')).toBe('');
  });

  it('prints one hunk with three lines of context', () => {
    const before = numbered(10);
    const after = [...before];
    after[4] = 'changed';
    expect(unifiedDiff('src/a.ts', text(before), text(after))).toBe(
      [
        '--- a/src/a.ts',
        '+++ b/src/a.ts',
        '@@ -2,7 +2,7 @@',
        ' line 2',
        ' line 3',
        ' line 4',
        '-line 5',
        '+changed',
        ' line 6',
        ' line 7',
        ' line 8',
      ].join('\n'),
    );
  });

  it('splits distant changes into separate hunks and merges close ones', () => {
    const before = numbered(30);
    const after = [...before];
    after[1] = 'two';
    after[4] = 'five';
    after[25] = 'twenty-six';
    const diff = unifiedDiff('f', text(before), text(after));
    const headers = diff.split('\n').filter((l) => l.startsWith('@@'));
    expect(headers).toEqual(['@@ -1,8 +1,8 @@', '@@ -23,7 +23,7 @@']);
  });

  it('numbers pure insertions and deletions the way diff -u does', () => {
    expect(unifiedDiff('f', '', 'a\nb\n')).toBe(
      ['--- a/f', '+++ b/f', '@@ -0,0 +1,2 @@', '+a', '+b'].join('\n'),
    );
    expect(unifiedDiff('f', 'a\nb\n', '')).toContain('@@ -1,2 +0,0 @@');
    expect(unifiedDiff('f', 'a\nc\n', 'a\nb\nc\n', 0)).toContain('@@ -1,0 +2,1 @@\n+b');
  });

  it('marks a missing final newline', () => {
    const diff = unifiedDiff('f', 'a\nb', 'a\nb\n');
    expect(diff).toBe(
      ['--- a/f', '+++ b/f', '@@ -1,2 +1,2 @@', ' a', '-b', '\\ No newline at end of file', '+b'].join('\n'),
    );
  });

  it('honours the context size', () => {
    const before = numbered(10);
    const after = [...before];
    after[4] = 'x';
    expect(unifiedDiff('f', text(before), text(after), 0)).toBe(
      ['--- a/f', '+++ b/f', '@@ -5,1 +5,1 @@', '-line 5', '+x'].join('\n'),
    );
  });

  it('copes with large rewrites', () => {
    const before = numbered(5000);
    const after = before.map((l) => `${l}!`);
    const diff = unifiedDiff('big', text(before), text(after));
    expect(diff.split('\n').filter((l) => l.startsWith('-line')).length).toBe(5000);
    expect(diffStats(text(before), text(after))).toEqual({ added: 5000, removed: 5000 });
  });

  it('shows two small edits at both ends of a 2,500-line file as two small hunks', () => {
    const before = numbered(2500);
    const after = [...before];
    after[1] = 'second line, changed';
    after[2497] = 'near the end, changed';
    const diff = unifiedDiff('long.txt', text(before), text(after));
    const lines = diff.split('\n');
    expect(lines.filter((l) => l.startsWith('@@'))).toEqual(['@@ -1,5 +1,5 @@', '@@ -2495,6 +2495,6 @@']);
    expect(lines.filter((l) => /^[-+][^-+]/.test(l))).toEqual([
      '-line 2',
      '+second line, changed',
      '-line 2498',
      '+near the end, changed',
    ]);
    expect(diffStats(text(before), text(after))).toEqual({ added: 2, removed: 2 });
  });

  it('writes a new file as a diff from /dev/null', () => {
    expect(unifiedDiff('src/new.ts', undefined, 'a\nb\n')).toBe(
      ['--- /dev/null', '+++ b/src/new.ts', '@@ -0,0 +1,2 @@', '+a', '+b'].join('\n'),
    );
  });

  it('produces diffs that GNU patch applies', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hearth-diff-'));
    try {
      const before = numbered(300);
      const after = [...before.slice(0, 10), 'inserted', ...before.slice(10, 200), ...before.slice(205)];
      after[250] = 'changed';
      await writeFile(join(dir, 'f.txt'), text(before));
      await writeFile(
        join(dir, 'change.diff'),
        `${unifiedDiff('f.txt', text(before), `${after.join('\n')}`)}\n`,
      );
      execFileSync('patch', ['-p1', '-s', '-i', 'change.diff'], { cwd: dir });
      expect(await readFile(join(dir, 'f.txt'), 'utf8')).toBe(after.join('\n'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
