import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIFF_MAX_BYTES, DIFF_MAX_LINES } from '../../../src/tools/git/diff.js';
import { commitFiles, makeRepo, type TestRepo } from './repo.js';

let repo: TestRepo;

beforeEach(async () => {
  repo = await makeRepo();
  await commitFiles(repo, { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'b\n' }, 'init');
});

afterEach(async () => {
  await repo.cleanup();
});

const numbered = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} ${i}`).join('\n');

describe('git_diff', () => {
  it('says when there are no changes and how to see the others', async () => {
    const r = await repo.call('git_diff');
    expect(r).toMatchObject({
      ok: true,
      output:
        'No unstaged changes. Pass staged=true for staged changes; new files show up only after git_add.',
    });
    expect((await repo.call('git_diff', { staged: true })).output).toBe(
      'No staged changes. Omit staged to see unstaged changes.',
    );
  });

  it('shows a summary then the unified diff of unstaged changes', async () => {
    await repo.write('a.txt', 'one\nTWO\nthree\nfour\n');
    const r = await repo.call('git_diff');
    expect(r.ok).toBe(true);
    const [header, patch] = r.output.split('\n\n');
    expect(header).toBe('1 file changed, +2 -1\n  a.txt +2 -1');
    expect(patch).toContain('diff --git a/a.txt b/a.txt');
    expect(patch).toContain('-two\n+TWO\n three\n+four');
    expect(r.output).not.toContain('\x1b[');
  });

  it('keeps staged and unstaged changes apart', async () => {
    await repo.write('a.txt', 'staged\n');
    repo.git('add', 'a.txt');
    await repo.write('b.txt', 'unstaged\n');
    const unstaged = await repo.call('git_diff');
    expect(unstaged.output).toMatch(/^1 file changed, \+1 -1\n {2}b\.txt \+1 -1\n/);
    const staged = await repo.call('git_diff', { staged: true });
    expect(staged.output).toMatch(/^1 file changed, \+1 -3\n {2}a\.txt \+1 -3\n/);
    expect(staged.output).not.toContain('b.txt');
  });

  it('narrows to a path and reports a missing one', async () => {
    await repo.write('a.txt', 'changed\n');
    await repo.write('b.txt', 'changed\n');
    const r = await repo.call('git_diff', { path: 'b.txt' });
    expect(r.output).toMatch(/^1 file changed/);
    expect(r.output).toContain('diff --git a/b.txt b/b.txt');
    expect(r.output).not.toContain('a/a.txt');
    expect((await repo.call('git_diff', { path: 'nope.txt' })).output).toBe(
      'No unstaged changes in nope.txt (nope.txt does not exist). Pass staged=true for staged changes; new files show up only after git_add.',
    );
  });

  it('treats a path like -rf as a file name and refuses paths outside the workspace', async () => {
    await repo.write('a.txt', 'changed\n');
    const dashed = await repo.call('git_diff', { path: '-rf' });
    expect(dashed.ok).toBe(true);
    expect(dashed.output).toMatch(/^No unstaged changes in -rf \(-rf does not exist\)/);
    const outside = await repo.call('git_diff', { path: '../home' });
    expect(outside.ok).toBe(false);
    expect(outside.output).toMatch(/outside the workspace/);
  });

  it('lists renames and binary files in the summary', async () => {
    repo.git('mv', 'b.txt', 'c.txt');
    await repo.write('img.bin', Buffer.from([0, 1, 2, 3, 0]).toString('latin1'));
    repo.git('add', 'img.bin');
    const r = await repo.call('git_diff', { staged: true });
    expect(r.output.split('\n\n')[0]).toBe(
      '2 files changed, +0 -0\n  b.txt -> c.txt +0 -0\n  img.bin (binary)',
    );
  });

  it('cuts a large diff and says how to narrow it', async () => {
    await commitFiles(repo, { 'big.txt': numbered(3000, 'old'), 'small.txt': 'x\n' }, 'big');
    await repo.write('big.txt', numbered(3000, 'new'));
    await repo.write('small.txt', 'y\n');
    const r = await repo.call('git_diff');
    expect(r.ok).toBe(true);
    expect(r.output.length).toBeLessThan(DIFF_MAX_BYTES + 1000);
    expect(r.output.split('\n\n')[0]).toBe(
      '2 files changed, +3001 -3001\n  big.txt +3000 -3000\n  small.txt +1 -1',
    );
    const note = r.output.split('\n').at(-1) ?? '';
    expect(note).toMatch(
      /^\[Diff cut: showing \d+ of 6,0\d\d lines\. Pass path="big\.txt" to see one file at a time;/,
    );
    expect(r.display).toContain('+new 2999');
    expect(r.display).toContain('diff --git a/small.txt b/small.txt');

    const one = await repo.call('git_diff', { path: 'big.txt' });
    const shown = Number(/showing (\d+) of/.exec(one.output)?.[1]);
    expect(shown).toBeLessThanOrEqual(DIFF_MAX_LINES);
    expect(one.output.split('\n').at(-1)).toContain(
      `page the diff with the shell tool: git diff -- big.txt | sed -n '${shown + 1},${shown + DIFF_MAX_LINES}p'`,
    );
  });

  it('fails clearly outside a repository', async () => {
    const bare = await makeRepo({ init: false });
    try {
      const r = await bare.call('git_diff');
      expect(r.ok).toBe(false);
      expect(r.output).toMatch(/^Not a git repository: /);
    } finally {
      await bare.cleanup();
    }
  });
});
