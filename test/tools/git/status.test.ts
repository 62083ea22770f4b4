import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseStatus } from '../../../src/tools/git/status-parse.js';
import { commitFiles, makeRepo, type TestRepo } from './repo.js';

let repo: TestRepo;

beforeEach(async () => {
  repo = await makeRepo();
});

afterEach(async () => {
  await repo.cleanup();
});

describe('git_status', () => {
  it('says clean when nothing changed', async () => {
    await commitFiles(repo, { 'a.txt': 'a\n' }, 'init');
    const r = await repo.call('git_status');
    expect(r.ok).toBe(true);
    expect(r.output).toBe('On main\nclean (nothing to commit)');
  });

  it('notes a repository without commits', async () => {
    await repo.write('new.txt', 'x');
    expect((await repo.call('git_status')).output).toBe(
      'On main (no commits yet)\nUntracked (1):\n  new.txt',
    );
  });

  it('groups staged, unstaged and untracked files', async () => {
    await commitFiles(
      repo,
      { 'a.txt': 'a\n', 'b.txt': 'b\n', 'old name.txt': 'o\n', 'gone.txt': 'g\n' },
      'init',
    );
    await repo.write('a.txt', 'a2\n');
    await repo.write('new.txt', 'n\n');
    repo.git('add', 'a.txt', 'new.txt');
    repo.git('mv', 'old name.txt', 'new name.txt');
    await repo.write('a.txt', 'a3\n');
    await repo.write('b.txt', 'b2\n');
    await rm(path.join(repo.ws, 'gone.txt'));
    await repo.write('notes.md', 'n');
    await repo.write('scratch/one.txt', '1');
    await repo.write('scratch/two.txt', '2');

    const r = await repo.call('git_status');
    expect(r.output).toBe(
      [
        'On main',
        'Staged (3):',
        '  M a.txt',
        '  R old name.txt -> new name.txt',
        '  A new.txt',
        'Unstaged (3):',
        '  M a.txt',
        '  M b.txt',
        '  D gone.txt',
        'Untracked (2):',
        '  notes.md',
        '  scratch/',
      ].join('\n'),
    );
    expect(r.meta).toMatchObject({ staged: 3, unstaged: 3, untracked: 2, conflicts: 0 });
  });

  it('shows ahead and behind counts against the upstream', async () => {
    await commitFiles(repo, { 'a.txt': 'a\n' }, 'init');
    repo.git('switch', '-q', '-c', 'feat', '--track', 'main');
    expect((await repo.call('git_status')).output).toBe(
      'On feat (main: up to date)\nclean (nothing to commit)',
    );
    await commitFiles(repo, { 'f.txt': 'f\n' }, 'feature');
    repo.git('switch', '-q', 'main');
    await commitFiles(repo, { 'm.txt': 'm\n' }, 'mainline');
    repo.git('switch', '-q', 'feat');
    expect((await repo.call('git_status')).output).toMatch(/^On feat \(main: ahead 1, behind 1\)\n/);
  });

  it('shows a detached HEAD and merge conflicts', async () => {
    await commitFiles(repo, { 'a.txt': 'base\n' }, 'init');
    repo.git('switch', '-q', '-c', 'other');
    await commitFiles(repo, { 'a.txt': 'theirs\n' }, 'theirs');
    repo.git('switch', '-q', 'main');
    await commitFiles(repo, { 'a.txt': 'ours\n' }, 'ours');
    expect(() => repo.git('merge', '-q', 'other')).toThrow();
    const conflicted = await repo.call('git_status');
    expect(conflicted.output).toContain('Conflicts (1):\n  UU a.txt');

    repo.git('merge', '--abort');
    repo.git('switch', '-q', '--detach', 'HEAD~1');
    expect((await repo.call('git_status')).output).toMatch(/^HEAD detached at [0-9a-f]{7}\nclean/);
  });

  it('lists at most 50 files per group', async () => {
    for (let i = 0; i < 60; i++) await repo.write(`f${String(i).padStart(2, '0')}.txt`, `${i}`);
    const lines = (await repo.call('git_status')).output.split('\n');
    expect(lines[1]).toBe('Untracked (60):');
    expect(lines).toHaveLength(2 + 50 + 1);
    expect(lines.at(-1)).toBe('  ... and 10 more');
  });

  it('parses a gone upstream', () => {
    const s = parseStatus('# branch.oid abc\0# branch.head topic\0# branch.upstream origin/topic\0');
    expect(s.upstream).toEqual({ name: 'origin/topic', gone: true });
  });
});
