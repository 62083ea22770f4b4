import { existsSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bwrapUnavailable } from '../../sandbox/support.js';
import { bwrapFor, commitFiles, makeRepo, type TestRepo } from './repo.js';

const unavailable = await bwrapUnavailable();

let repo: TestRepo;

beforeEach(async () => {
  repo = await makeRepo();
});

afterEach(async () => {
  await repo.cleanup();
});

async function hook(name: string, body: string, where: TestRepo = repo): Promise<void> {
  const file = path.join(where.ws, '.git', 'hooks', name);
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
}

describe('git_commit', () => {
  it('commits what is staged with the configured identity', async () => {
    await repo.write('a.txt', 'one\ntwo\n');
    repo.git('add', 'a.txt');
    const r = await repo.call('git_commit', { message: 'Add a\n\nWith a body.' });
    expect(r.ok).toBe(true);
    expect(r.output).toMatch(/^Committed [0-9a-f]{7,}: Add a\n1 file changed, 2 insertions\(\+\)$/);
    expect(repo.git('log', '-1', '--format=%an <%ae>|%B')).toBe(
      'Test Person <test@example.com>|Add a\n\nWith a body.\n\n',
    );
  });

  it('commits modified tracked files with all=true', async () => {
    await commitFiles(repo, { 'a.txt': 'a\n', 'b.txt': 'b\n' }, 'init');
    await repo.write('a.txt', 'a2\n');
    await repo.write('untracked.txt', 'u\n');
    const r = await repo.call('git_commit', { message: 'Change a', all: true });
    expect(r.output).toMatch(/: Change a\n1 file changed, 1 insertion\(\+\), 1 deletion\(-\)$/);
    expect(repo.git('status', '--porcelain')).toBe('?? untracked.txt\n');
  });

  it('suggests git_add when nothing is staged', async () => {
    await commitFiles(repo, { 'a.txt': 'a\n' }, 'init');
    await repo.write('a.txt', 'a2\n');
    const r = await repo.call('git_commit', { message: 'x' });
    expect(r.ok).toBe(false);
    expect(r.output.split('\n')[0]).toBe(
      'Nothing staged to commit. Stage files with git_add, or pass all=true to commit every modified tracked file.',
    );
    expect(r.output).toContain('git: ');
  });

  it('says when there are only untracked files or nothing at all', async () => {
    await commitFiles(repo, { 'a.txt': 'a\n' }, 'init');
    const clean = await repo.call('git_commit', { message: 'x' });
    expect(clean.output.split('\n')[0]).toBe('Nothing to commit: the working tree is clean.');
    await repo.write('new.txt', 'n\n');
    const untracked = await repo.call('git_commit', { message: 'x', all: true });
    expect(untracked.output.split('\n')[0]).toBe(
      'Nothing staged to commit; there are only untracked files. Stage them with git_add first.',
    );
  });

  it('asks the user to configure an identity instead of inventing one', async () => {
    const bare = await makeRepo({ identity: false });
    try {
      // Without this, git may build an address from the user and host names on a machine with a domain.
      bare.git('config', 'user.useConfigOnly', 'true');
      await bare.write('a.txt', 'a\n');
      bare.git('add', 'a.txt');
      const r = await bare.call('git_commit', { message: 'x' });
      expect(r.ok).toBe(false);
      expect(r.output).toMatch(/^Cannot commit: git does not know who the author is\./);
      expect(r.output).toContain('git config --global user.name');
      expect(r.output).toContain('git config --global user.email');
      expect(() => bare.git('rev-parse', 'HEAD')).toThrow();
    } finally {
      await bare.cleanup();
    }
  });

  it('gives the identity message with only an empty HOME and no system config', async () => {
    const bare = await makeRepo({ identity: false });
    try {
      await bare.write('a.txt', 'a\n');
      bare.git('add', 'a.txt');
      const r = await bare.call('git_commit', { message: 'x' });
      // A host with a full domain name lets git guess an address; there is nothing to check then.
      if (!r.ok) expect(r.output).toMatch(/^Cannot commit: git does not know who the author is\./);
    } finally {
      await bare.cleanup();
    }
  });

  it.skipIf(unavailable !== null)('runs hooks in the sandbox and reports a hook that refuses', async () => {
    const boxed = await makeRepo({ sandbox: bwrapFor });
    try {
      await boxed.write('a.txt', 'a\n');
      boxed.git('add', 'a.txt');
      await hook('pre-commit', 'echo "lint: 3 problems in a.txt" >&2\nexit 1', boxed);
      const refused = await boxed.call('git_commit', { message: 'x' });
      expect(refused.ok).toBe(false);
      expect(refused.output).toBe(
        'Commit failed (exit code 1); a commit hook may have rejected it.\ngit: lint: 3 problems in a.txt',
      );

      await hook('pre-commit', 'echo "$HEARTH_SANDBOXED" > hook-ran.txt', boxed);
      const r = await boxed.call('git_commit', { message: 'x' });
      expect(r.ok).toBe(true);
      expect(await readFile(path.join(boxed.ws, 'hook-ran.txt'), 'utf8')).toBe('bwrap\n');
    } finally {
      await boxed.cleanup();
    }
  });

  it('runs no hook without a sandbox', async () => {
    await repo.write('a.txt', 'a\n');
    repo.git('add', 'a.txt');
    await hook('pre-commit', 'echo ran > hook-ran.txt; exit 1');
    const r = await repo.call('git_commit', { message: 'x' });
    expect(r.ok).toBe(true);
    expect(existsSync(path.join(repo.ws, 'hook-ran.txt'))).toBe(false);
  });

  it('takes a message that starts with a dash as the message', async () => {
    await repo.write('a.txt', 'a\n');
    repo.git('add', 'a.txt');
    const r = await repo.call('git_commit', { message: '--amend -rf' });
    expect(r.output).toMatch(/^Committed [0-9a-f]+: --amend -rf\n/);
  });

  it('rejects an empty message', async () => {
    const r = await repo.call('git_commit', { message: '  ' });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/The commit message is empty/);
  });
});
