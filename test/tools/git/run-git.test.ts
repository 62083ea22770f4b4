import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createNoneSandbox } from '../../../src/sandbox/none.js';
import { createGitRunner, gitFailure, gitMessage } from '../../../src/tools/git/run-git.js';
import { ToolError } from '../../../src/tools/types.js';
import { makeToolContext } from '../../support/tool-context.js';
import { commitFiles, makeRepo, type TestRepo } from './repo.js';

let repo: TestRepo | undefined;

afterEach(async () => {
  await repo?.cleanup();
  repo = undefined;
});

describe('git runner', () => {
  it('says plainly when the workspace is not a repository', async () => {
    repo = await makeRepo({ init: false });
    const r = await repo.call('git_status');
    expect(r.ok).toBe(false);
    expect(r.output).toBe(
      `Not a git repository: ${repo.ws}. Run \`git init\` with the shell tool if you want one.`,
    );
  });

  it('does not use a repository above the workspace', async () => {
    repo = await makeRepo({ init: false });
    repo.git('-C', repo.root, 'init', '-q');
    const r = await repo.call('git_log');
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/^Not a git repository: /);
  });

  it('says when git is not installed', async () => {
    repo = await makeRepo({ runner: { binary: '/nonexistent/bin/git' } });
    const r = await repo.call('git_status');
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/git is not installed or not on PATH/);
  });

  it('ignores GIT_DIR and friends inherited from a parent git', async () => {
    repo = await makeRepo();
    const other = await makeRepo();
    try {
      await commitFiles(repo, { 'mine.txt': 'x\n' }, 'mine');
      await commitFiles(other, { 'theirs.txt': 'y\n' }, 'theirs');
      // Let through by the sandbox's env settings, GIT_DIR still must not redirect the tools.
      const sandbox = createNoneSandbox({
        workspace: repo.ws,
        network: false,
        envAllow: ['GIT_*', 'HOME'],
        hostEnv: { ...repo.env, GIT_DIR: path.join(other.ws, '.git') },
      });
      const ctx = makeToolContext(repo.ws, { sandbox: await sandbox });
      const r = await createGitRunner().run(ctx, ['log', '--format=%s']);
      expect(r.stdout.trim()).toBe('mine');
    } finally {
      await other.cleanup();
    }
  });

  it('stops a git that runs too long', async () => {
    repo = await makeRepo({ init: false });
    const slow = path.join(repo.root, 'slow-git');
    await writeFile(slow, '#!/bin/sh\nsleep 5\n');
    await chmod(slow, 0o755);
    const git = createGitRunner({ binary: slow, timeoutMs: 200 });
    await expect(git.run(repo.ctx, ['status'])).rejects.toThrow(/git status timed out after 0.2s/);
  });

  it('keeps the beginning of output that is too long and marks it cut', async () => {
    repo = await makeRepo();
    await commitFiles(repo, { 'a.txt': 'x' }, 'init');
    const git = createGitRunner();
    const r = await git.run(repo.ctx, ['log', '--format=%H%n%H%n%H'], { maxBytes: 50 });
    expect(r.truncated).toBe(true);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.length).toBeLessThanOrEqual(50);
    expect(r.stdout).toMatch(/^[0-9a-f]{40}\n/);
  });

  it('reports cancellation through the registry', async () => {
    repo = await makeRepo();
    const controller = new AbortController();
    controller.abort();
    const r = await repo.call('git_status', {}, makeToolContext(repo.ws, { signal: controller.signal }));
    expect(r).toMatchObject({ ok: false, output: 'Cancelled by the user.' });
  });

  it('keeps git messages short and drops hints', () => {
    const result = {
      args: ['add', '--', 'x'],
      exitCode: 1,
      stdout: '',
      stderr: 'error: one\nhint: do this\nhint: or that\nfatal: two\n',
      truncated: false,
    };
    expect(gitMessage(result)).toBe('error: one\nfatal: two');
    const err = gitFailure('Could not add x.', result);
    expect(err).toBeInstanceOf(ToolError);
    expect(err.message).toBe('Could not add x.\ngit: error: one\nfatal: two');
    const long = { ...result, stderr: Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n') };
    expect(gitMessage(long).split('\n')).toHaveLength(16);
    expect(gitMessage(long)).toMatch(/\[\.\.\. 25 more lines\]$/);
  });
});
