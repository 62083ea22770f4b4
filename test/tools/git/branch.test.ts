import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitFiles, makeRepo, type TestRepo } from './repo.js';

let repo: TestRepo;

beforeEach(async () => {
  repo = await makeRepo();
});

afterEach(async () => {
  await repo.cleanup();
});

const current = () => repo.git('branch', '--show-current').trim();

describe('git_branch', () => {
  it('lists branches with the current one marked', async () => {
    expect((await repo.call('git_branch', { action: 'list' })).output).toBe('* main (no commits yet)');
    await commitFiles(repo, { 'a.txt': 'a\n' }, 'init');
    repo.git('branch', 'feat');
    repo.git('branch', '--set-upstream-to=main', 'feat');
    expect((await repo.call('git_branch', { action: 'list' })).output).toBe('  feat (main)\n* main');
  });

  it('creates a branch without switching to it', async () => {
    await commitFiles(repo, { 'a.txt': 'a\n' }, 'init');
    const r = await repo.call('git_branch', { action: 'create', name: 'fix/login' });
    expect(r.ok).toBe(true);
    expect(r.output).toMatch(/^Created branch fix\/login at HEAD/);
    expect(current()).toBe('main');
    expect(repo.git('branch', '--list', 'fix/login')).toContain('fix/login');

    const again = await repo.call('git_branch', { action: 'create', name: 'fix/login' });
    expect(again.ok).toBe(false);
    expect(again.output).toMatch(/^Branch fix\/login already exists\. Use action=switch/);
  });

  it('refuses bad names, including ones that look like options', async () => {
    await commitFiles(repo, { 'a.txt': 'a\n' }, 'init');
    for (const name of ['-rf', '--force', 'a..b', 'has space', '@{-1}', 'end.lock', 'x:y']) {
      const r = await repo.call('git_branch', { action: 'create', name });
      expect(r.ok, name).toBe(false);
      expect(r.output, name).toContain(`"${name}" is not a valid branch name`);
    }
    expect(repo.git('branch', '--format=%(refname:short)')).toBe('main\n');
  });

  it('needs a name to create or switch', async () => {
    const r = await repo.call('git_branch', { action: 'switch' });
    expect(r.ok).toBe(false);
    expect(r.output).toBe('action=switch needs a name, e.g. {"action":"switch","name":"fix/login"}.');
  });

  it('cannot create a branch before the first commit', async () => {
    const r = await repo.call('git_branch', { action: 'create', name: 'feat' });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/^Cannot create a branch before the first commit/);
  });

  it('switches and keeps non-conflicting local changes', async () => {
    await commitFiles(repo, { 'a.txt': 'a\n', 'b.txt': 'b\n' }, 'init');
    repo.git('branch', 'feat');
    await repo.write('b.txt', 'local edit\n');
    const r = await repo.call('git_branch', { action: 'switch', name: 'feat' });
    expect(r).toMatchObject({ ok: true, output: 'Switched to feat.\nUncommitted changes kept: b.txt.' });
    expect(current()).toBe('feat');
    expect((await repo.call('git_branch', { action: 'switch', name: 'feat' })).output).toBe(
      'Already on feat.',
    );
  });

  it('refuses to switch when local changes would be overwritten', async () => {
    await commitFiles(repo, { 'a.txt': 'a\n' }, 'init');
    repo.git('switch', '-q', '-c', 'feat');
    await commitFiles(repo, { 'a.txt': 'feat version\n' }, 'feat');
    repo.git('switch', '-q', 'main');
    await repo.write('a.txt', 'uncommitted\n');
    const r = await repo.call('git_branch', { action: 'switch', name: 'feat' });
    expect(r.ok).toBe(false);
    const [first, ...rest] = r.output.split('\n');
    expect(first).toMatch(
      /^Cannot switch to feat: uncommitted changes .* would be overwritten\. Commit them/,
    );
    expect(rest.join('\n')).toContain('a.txt');
    expect(current()).toBe('main');
  });

  it('says when the branch does not exist or is a tag', async () => {
    await commitFiles(repo, { 'a.txt': 'a\n' }, 'init');
    const missing = await repo.call('git_branch', { action: 'switch', name: 'nope' });
    expect(missing.ok).toBe(false);
    expect(missing.output).toMatch(/^No branch named nope\. Use action=list/);
    repo.git('tag', 'v1');
    const tag = await repo.call('git_branch', { action: 'switch', name: 'v1' });
    expect(tag.output).toMatch(/^v1 is not a branch\./);
  });
});
