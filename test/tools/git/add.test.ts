import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitFiles, makeRepo, type TestRepo } from './repo.js';

let repo: TestRepo;

beforeEach(async () => {
  repo = await makeRepo();
  await commitFiles(repo, { 'a.txt': 'a\n' }, 'init');
});

afterEach(async () => {
  await repo.cleanup();
});

describe('git_add', () => {
  it('stages the given files and lists what is staged', async () => {
    await repo.write('a.txt', 'a2\n');
    await repo.write('new.txt', 'n\n');
    await repo.write('other.txt', 'o\n');
    const r = await repo.call('git_add', { paths: ['a.txt', 'new.txt'] });
    expect(r).toMatchObject({
      ok: true,
      output: 'Staged (2):\n  M a.txt\n  A new.txt\nStill not staged: 1 untracked.',
    });
    expect(repo.git('diff', '--cached', '--name-only')).toBe('a.txt\nnew.txt\n');
  });

  it('stages everything with "."', async () => {
    await repo.write('a.txt', 'a2\n');
    await repo.write('dir/deep.txt', 'd\n');
    const r = await repo.call('git_add', { paths: ['.'] });
    expect(r.output).toBe('Staged (2):\n  M a.txt\n  A dir/deep.txt');
  });

  it('accepts absolute paths inside the workspace', async () => {
    await repo.write('new.txt', 'n\n');
    const r = await repo.call('git_add', { paths: [path.join(repo.ws, 'new.txt')] });
    expect(r.output).toBe('Staged (1):\n  A new.txt');
  });

  it('treats -rf as a file name, never as options', async () => {
    await repo.write('a.txt', 'a2\n');
    const missing = await repo.call('git_add', { paths: ['-rf'] });
    expect(missing.ok).toBe(false);
    expect(missing.output).toMatch(/^Nothing was staged: no file matches "-rf"/);
    expect(missing.output).toContain("git: fatal: pathspec '-rf' did not match any files");
    expect(repo.git('diff', '--cached', '--name-only')).toBe('');

    await repo.write('-rf', 'odd name\n');
    const present = await repo.call('git_add', { paths: ['-rf'] });
    expect(present.output).toBe('Staged (1):\n  A -rf\nStill not staged: 1 unstaged.');
  });

  it('refuses paths outside the workspace', async () => {
    const r = await repo.call('git_add', { paths: ['../home/.gitconfig'] });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/outside the workspace/);
  });

  it('stages the other paths and warns about ignored ones', async () => {
    await commitFiles(repo, { '.gitignore': 'build/\n' }, 'ignore');
    await repo.write('build/out.js', 'x');
    await repo.write('src.ts', 'y');
    const r = await repo.call('git_add', { paths: ['src.ts', 'build/out.js'] });
    expect(r.ok).toBe(false);
    expect(r.output).toBe('Staged (1):\n  A src.ts\nNot staged, because .gitignore ignores them:\n  build');
  });

  it('stages a symlink as a link, not its target', async () => {
    await symlink('a.txt', path.join(repo.ws, 'link.txt'));
    const r = await repo.call('git_add', { paths: ['link.txt'] });
    expect(r.output).toBe('Staged (1):\n  A link.txt');
    expect(repo.git('ls-files', '-s', 'link.txt')).toMatch(/^120000 /);
  });

  it('says when nothing ends up staged', async () => {
    expect((await repo.call('git_add', { paths: ['a.txt'] })).output).toBe(
      'Nothing is staged: the paths have no changes.',
    );
  });

  it('needs at least one path', async () => {
    const r = await repo.call('git_add', { paths: [] });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/Invalid arguments for git_add/);
  });
});
