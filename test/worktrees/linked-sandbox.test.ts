import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBwrapSandbox } from '../../src/sandbox/bwrap.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { createGitTools } from '../../src/tools/git/index.js';
import { ToolRegistry, type ToolResult } from '../../src/tools/registry.js';
import { shellTool } from '../../src/tools/shell.js';
import { createWorktree } from '../../src/worktrees/create.js';
import { trustedLink } from '../../src/worktrees/registry.js';
import { bwrapUnavailable } from '../sandbox/support.js';
import { makeToolContext } from '../support/tool-context.js';

/**
 * A session in a worktree Hearth made: its git commits on the worktree's branch, while nothing it
 * runs can plant a hook, a config setting or a pointer in the main repository's `.git` (which the
 * user's own git runs on the host).
 */

const unavailable = await bwrapUnavailable();

let root: string;
let main: string;
let home: string;
const env = () => ({ PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1' });

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    env: {
      ...env(),
      GIT_AUTHOR_NAME: 'T',
      GIT_AUTHOR_EMAIL: 't@x',
      GIT_COMMITTER_NAME: 'T',
      GIT_COMMITTER_EMAIL: 't@x',
    },
    encoding: 'utf8',
    stdio: 'pipe',
  });
}

beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-wt-')));
  main = path.join(root, 'repo');
  home = path.join(root, 'home');
  await mkdir(main);
  await mkdir(home);
  git(main, 'init', '-q', '-b', 'main');
  git(main, 'config', 'user.name', 'Test Person');
  git(main, 'config', 'user.email', 'test@example.invalid');
  await writeFile(path.join(main, 'a.txt'), 'a\n');
  git(main, 'add', 'a.txt');
  git(main, 'commit', '-qm', 'initial');
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('createWorktree', () => {
  it('makes hearth/NAME beside the main checkout and records it; refuses outside a repository', async () => {
    const made = await createWorktree(main, { home, name: 'fix', env: env() });
    if (!made.ok) throw new Error(made.error);
    expect(made.worktree.path).toBe(path.join(root, 'repo-fix'));
    expect(git(main, 'branch', '--list', 'hearth/fix')).toContain('hearth/fix');
    expect(await trustedLink(home, made.worktree.path)).toEqual({
      gitDir: path.join(main, '.git', 'worktrees', 'repo-fix'),
      commonDir: path.join(main, '.git'),
    });
    // Again under the same name: the same worktree.
    const again = await createWorktree(main, { home, name: 'fix', env: env() });
    expect(again.ok && again.reused).toBe(true);

    const plain = path.join(root, 'plain');
    await mkdir(plain);
    const refused = await createWorktree(plain, { home, env: env() });
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.error).toMatch(/not in a git repository/);
    expect((await createWorktree(main, { home, name: '../x', env: env() })).ok).toBe(false);
  });

  it('grants nothing to a worktree Hearth did not make', async () => {
    git(main, 'worktree', 'add', '-q', '-b', 'other', path.join(root, 'other'));
    expect(await trustedLink(home, path.join(root, 'other'))).toBeUndefined();
  });
});

describe.skipIf(unavailable !== null)(
  `a session in a worktree (bwrap${unavailable ? `: ${unavailable}` : ''})`,
  () => {
    let sandbox: Sandbox;
    let wt: string;
    let call: (name: string, args?: Record<string, unknown>) => Promise<ToolResult>;

    beforeEach(async () => {
      const made = await createWorktree(main, { home, name: 'job', env: env() });
      if (!made.ok) throw new Error(made.error);
      wt = made.worktree.path;
      const linkedRepo = await trustedLink(home, wt);
      sandbox = await createBwrapSandbox({
        workspace: wt,
        network: false,
        envAllow: [],
        linkedRepo,
        hostEnv: env(),
      });
      const registry = new ToolRegistry([...createGitTools(), shellTool]);
      const ctx = makeToolContext(wt, { sandbox });
      let n = 0;
      call = (name, args = {}) =>
        registry.execute({ id: `c${++n}`, name, arguments: JSON.stringify(args) }, ctx);
    });

    afterEach(async () => {
      await sandbox.dispose();
    });

    it("commits on the worktree's branch with the git tools, the main checkout untouched", async () => {
      await writeFile(path.join(wt, 'a.txt'), 'changed\n');
      const added = await call('git_add', { paths: ['a.txt'] });
      expect(added.ok, added.output).toBe(true);
      const committed = await call('git_commit', { message: 'in the worktree' });
      expect(committed.ok, committed.output).toBe(true);
      expect(git(main, 'log', '-1', '--format=%s', 'hearth/job').trim()).toBe('in the worktree');
      expect(git(main, 'log', '-1', '--format=%s', 'main').trim()).toBe('initial');
      expect(await readFile(path.join(main, 'a.txt'), 'utf8')).toBe('a\n');
      // Plain git in the shell works as well.
      const log = await call('shell', { command: 'git log --oneline | wc -l' });
      expect(log.output).toMatch(/\b2\b/);
    });

    it('cannot plant a hook, a setting or a pointer in the main repository', async () => {
      const common = path.join(main, '.git');
      const own = path.join(common, 'worktrees', 'repo-job');
      const hooksBefore = await readdir(path.join(common, 'hooks'));
      const configBefore = await readFile(path.join(common, 'config'), 'utf8');
      const attempts = [
        `printf '#!/bin/sh\\ntouch ${root}/pwned\\n' > ${common}/hooks/pre-commit; chmod +x ${common}/hooks/pre-commit`,
        `printf '#!/bin/sh\\ntouch ${root}/pwned\\n' > ${common}/hooks/post-checkout`,
        'git config core.hooksPath .evil-hooks',
        `git config --file ${common}/config core.fsmonitor 'touch ${root}/pwned'`,
        `printf '[core]\\n\\thooksPath = /tmp\\n' > ${own}/config.worktree`,
        `echo ${root}/elsewhere > ${own}/commondir`,
        `mkdir -p ${common}/info && echo '* filter=evil' > ${common}/info/attributes`,
        `echo /tmp > ${common}/objects/info/alternates`,
        `mv ${common}/config ${common}/config.old`,
        `git update-ref refs/heads/main HEAD~0`,
      ];
      for (const command of attempts) await call('shell', { command });
      expect(await readdir(path.join(common, 'hooks'))).toEqual(hooksBefore);
      expect(await readFile(path.join(common, 'config'), 'utf8')).toBe(configBefore);
      expect(await readFile(path.join(own, 'config.worktree'), 'utf8')).toBe('');
      expect((await readFile(path.join(own, 'commondir'), 'utf8')).trim()).toBe('../..');
      expect(existsSync(path.join(common, 'info', 'attributes'))).toBe(false);
      expect(existsSync(path.join(common, 'objects', 'info', 'alternates'))).toBe(false);
      expect(existsSync(path.join(common, 'config.old'))).toBe(false);
      // The main branch did not move, and the user's git in the main checkout still runs nothing.
      expect(git(main, 'log', '-1', '--format=%s', 'main').trim()).toBe('initial');
      await writeFile(path.join(main, 'b.txt'), 'b\n');
      git(main, 'add', 'b.txt');
      git(main, 'commit', '-qm', 'user commit');
      git(main, 'checkout', '-q', '-b', 'user-branch');
      expect(existsSync(path.join(root, 'pwned'))).toBe(false);
    });
  },
);
