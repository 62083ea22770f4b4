import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBwrapSandbox } from '../../src/sandbox/bwrap.js';
import { createNoneSandbox } from '../../src/sandbox/none.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { createGitTools } from '../../src/tools/git/index.js';
import { ToolRegistry, type ToolResult } from '../../src/tools/registry.js';
import { shellTool } from '../../src/tools/shell.js';
import { runCli } from '../support/cli.js';
import { reply, startScriptedServer } from '../support/scripted-server.js';
import { makeToolContext } from '../support/tool-context.js';
import { bwrapUnavailable } from './support.js';

/**
 * Issue 12, class 1: a repository the sandbox could write must not make the git tools run its code
 * on the host, nor lead them out of the workspace. Every payload would create a marker in a
 * directory next to the workspace, which exists on the host only: the sandbox cannot see it, so a
 * marker there means the payload ran unconfined. A second marker inside the workspace shows, where
 * the payload is expected to run at all, that it did run (in the sandbox), so the test cannot pass
 * by the payload simply not firing.
 */

const unavailable = await bwrapUnavailable();

let root: string;
let ws: string;
let hostOnly: string;
let outside: string;
let home: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-git-escape-')));
  ws = path.join(root, 'ws');
  hostOnly = path.join(root, 'host-only');
  outside = path.join(root, 'outside');
  home = path.join(root, 'home');
  for (const dir of [ws, hostOnly, outside, home]) await mkdir(dir);
  env = { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1' };
  git(ws, 'init', '-q', '-b', 'main');
  git(ws, 'config', 'user.name', 'Test Person');
  git(ws, 'config', 'user.email', 'test@example.invalid');
  await writeFile(path.join(ws, 'a.txt'), 'a\n');
  git(ws, 'add', 'a.txt');
  git(ws, 'commit', '-qm', 'initial');
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The test's own git, on the host, with an identity for the repositories it makes. */
function git(cwd: string, ...args: string[]): string {
  const identity = {
    GIT_AUTHOR_NAME: 'T',
    GIT_AUTHOR_EMAIL: 't@x',
    GIT_COMMITTER_NAME: 'T',
    GIT_COMMITTER_EMAIL: 't@x',
  };
  return execFileSync('git', args, { cwd, env: { ...env, ...identity }, encoding: 'utf8', stdio: 'pipe' });
}

/** A payload that leaves `name` on the host if it runs there, and `name` in the workspace wherever it runs. */
function payload(name: string): string {
  return `touch ${hostOnly}/${name}; touch ${ws}/ran-${name}; true`;
}

const ranOnHost = (name: string) => existsSync(path.join(hostOnly, name));
const ranAtAll = (name: string) => existsSync(path.join(ws, `ran-${name}`));

async function tools(sandbox: Sandbox) {
  const registry = new ToolRegistry([...createGitTools(), shellTool]);
  const ctx = makeToolContext(ws, { sandbox });
  let n = 0;
  return (name: string, args: Record<string, unknown> = {}): Promise<ToolResult> =>
    registry.execute({ id: `c${++n}`, name, arguments: JSON.stringify(args) }, ctx);
}

/** A submodule `lib` with changes, whose own config (not the workspace's) plants an fsmonitor. */
async function dirtySubmoduleWithFsmonitor(name: string): Promise<void> {
  const sub = path.join(root, 'subsrc');
  await mkdir(sub);
  git(sub, 'init', '-q', '-b', 'main');
  git(sub, 'commit', '-q', '--allow-empty', '-m', 'sub');
  git(ws, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'lib');
  git(ws, 'commit', '-qm', 'add lib');
  git(path.join(ws, 'lib'), 'config', 'core.fsmonitor', payload(name));
  await writeFile(path.join(ws, 'lib', 'x'), 'dirty\n');
}

async function executable(file: string, body: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
}

/** Variants that both modes refuse: the repository leads out of the workspace. */
function redirectionCases(make: () => Promise<Sandbox>) {
  it('refuses a .git file whose gitdir is outside the workspace, and shows none of its history', async () => {
    git(outside, 'init', '-q', '-b', 'main');
    git(outside, 'commit', '-q', '--allow-empty', '-m', 'SECRET-HISTORY');
    await rm(path.join(ws, '.git'), { recursive: true });
    await writeFile(path.join(ws, '.git'), `gitdir: ${path.join(outside, '.git')}\n`);
    const call = await tools(await make());
    for (const tool of ['git_status', 'git_log']) {
      const r = await call(tool);
      expect(r.ok).toBe(false);
      expect(r.output).toMatch(
        /^Refusing to run git: the repository leads outside the workspace \(\.git points to /,
      );
      expect(r.output).not.toContain('SECRET-HISTORY');
    }
  });

  it('refuses a .git symlink to a repository outside', async () => {
    git(outside, 'init', '-q');
    await rm(path.join(ws, '.git'), { recursive: true });
    await symlink(path.join(outside, '.git'), path.join(ws, '.git'));
    const r = await (await tools(await make()))('git_add', { paths: ['a.txt'] });
    expect(r.output).toMatch(/leads outside the workspace \(\.git links to .*outside\/\.git\)/);
    expect(existsSync(path.join(outside, '.git', 'index'))).toBe(false);
  });

  it('refuses a commondir that names a repository outside', async () => {
    git(outside, 'init', '-q');
    await writeFile(path.join(ws, '.git', 'commondir'), path.join(outside, '.git'));
    const r = await (await tools(await make()))('git_status');
    expect(r.output).toMatch(/leads outside the workspace \(\.git\/commondir names .*outside\/\.git\)/);
  });

  it('refuses core.worktree pointing outside', async () => {
    git(ws, 'config', 'core.worktree', outside);
    const r = await (await tools(await make()))('git_status');
    expect(r.output).toMatch(/leads outside the workspace \(the work tree is .*outside\)/);
  });

  it('refuses a submodule whose .git file leads outside', async () => {
    git(outside, 'init', '-q');
    await mkdir(path.join(ws, 'lib'));
    await writeFile(path.join(ws, 'lib', '.git'), `gitdir: ${path.join(outside, '.git')}\n`);
    await writeFile(path.join(ws, '.gitmodules'), '[submodule "lib"]\n\tpath = lib\n\turl = ./lib\n');
    const r = await (await tools(await make()))('git_diff');
    expect(r.output).toMatch(/leads outside the workspace \(lib\/\.git points to .*outside\/\.git\)/);
  });
}

describe.skipIf(unavailable !== null)(
  `git tools under bubblewrap${unavailable ? ` - SKIPPED: ${unavailable}` : ''}`,
  () => {
    let sandbox: Sandbox | undefined;
    const make = async () => {
      sandbox = await createBwrapSandbox({ workspace: ws, network: false, envAllow: [], hostEnv: env });
      return sandbox;
    };
    afterEach(async () => {
      await sandbox?.dispose();
    });

    it('read-only git_status runs core.fsmonitor only inside the sandbox', async () => {
      git(ws, 'config', 'core.fsmonitor', payload('fsmonitor'));
      const r = await (await tools(await make()))('git_status');
      expect(r.ok).toBe(true);
      expect(ranAtAll('fsmonitor')).toBe(true);
      expect(ranOnHost('fsmonitor')).toBe(false);
    });

    it('git_commit runs hooks from core.hooksPath only inside the sandbox', async () => {
      git(ws, 'config', 'core.hooksPath', '.githooks');
      await executable(path.join(ws, '.githooks', 'pre-commit'), payload('hookspath'));
      await writeFile(path.join(ws, 'a.txt'), 'changed\n');
      const r = await (await tools(await make()))('git_commit', { message: 'change', all: true });
      expect(r.ok).toBe(true);
      expect(ranAtAll('hookspath')).toBe(true);
      expect(ranOnHost('hookspath')).toBe(false);
    });

    it('runs a clean filter and a diff textconv only inside the sandbox', async () => {
      await writeFile(path.join(ws, '.gitattributes'), '*.txt filter=evil diff=evil\n');
      git(ws, 'config', 'filter.evil.clean', `${payload('clean')}; cat`);
      git(ws, 'config', 'diff.evil.textconv', `sh -c '${payload('textconv')}; cat "$0"'`);
      await writeFile(path.join(ws, 'a.txt'), 'changed\n');
      const call = await tools(await make());
      expect((await call('git_diff')).ok).toBe(true);
      expect((await call('git_add', { paths: ['a.txt'] })).ok).toBe(true);
      expect(ranAtAll('clean')).toBe(true);
      expect(ranOnHost('clean')).toBe(false);
      expect(ranOnHost('textconv')).toBe(false);
    });

    it("runs a submodule's own fsmonitor only inside the sandbox", async () => {
      await dirtySubmoduleWithFsmonitor('subfsmonitor');
      const r = await (await tools(await make()))('git_status');
      expect(r.ok).toBe(true);
      expect(ranAtAll('subfsmonitor')).toBe(true);
      expect(ranOnHost('subfsmonitor')).toBe(false);
    });

    it('strips hooks planted by a shell command that created .git, so nothing runs later', async () => {
      await rm(path.join(ws, '.git'), { recursive: true });
      // The user's own identity, which the sandbox hands to its git.
      await writeFile(
        path.join(home, '.gitconfig'),
        '[user]\n\tname = Host User\n\temail = host@example.invalid\n',
      );
      const call = await tools(await make());
      const hook = `printf '#!/bin/sh\\n${payload('late-hook')}\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`;
      const created = await call('shell', {
        command: `git init -q && git config core.fsmonitor '${payload('late-fsmonitor')}' && ${hook}`,
      });
      expect(created.output).toMatch(/This command created git hooks; removed hooks\/pre-commit/);
      expect(created.output).toMatch(
        /This command created \.git\/config; removed its settings that run programs \(core\.fsmonitor\)/,
      );
      expect(existsSync(path.join(ws, '.git', 'hooks', 'pre-commit'))).toBe(false);
      expect(await readFile(path.join(ws, '.git', 'config'), 'utf8')).not.toContain('fsmonitor');

      await call('git_add', { paths: ['.'] });
      const committed = await call('git_commit', { message: 'first' });
      expect(committed.output).toMatch(/^Committed [0-9a-f]+: first/);
      expect(git(ws, 'log', '-1', '--format=%an')).toBe('Host User\n');
      // The user's own git, on the host, runs nothing either.
      git(ws, 'status');
      for (const name of ['late-hook', 'late-fsmonitor']) {
        expect(ranAtAll(name)).toBe(false);
        expect(ranOnHost(name)).toBe(false);
      }
    });

    it('the real CLI in normal mode: git_status runs without a question, and fsmonitor only inside', async () => {
      git(ws, 'config', 'core.fsmonitor', payload('cli-fsmonitor'));
      const server = await startScriptedServer({
        turns: [reply().tool('git_status', {}), reply().text('Clean.')],
      });
      try {
        const r = await runCli(['--tools', 'default,git', 'what changed?'], {
          cwd: ws,
          env: { HOME: home, HEARTH_HOME: path.join(home, '.hearth'), HEARTH_BASE_URL: server.baseUrl },
        });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toMatch(/✓ git_status/);
      } finally {
        await server.close();
      }
      expect(ranAtAll('cli-fsmonitor')).toBe(true);
      expect(ranOnHost('cli-fsmonitor')).toBe(false);
    });

    redirectionCases(make);
  },
);

describe('git tools without a sandbox: repository code neutralised', () => {
  let sandbox: Sandbox | undefined;
  const make = async () => {
    sandbox = await createNoneSandbox({ workspace: ws, network: false, envAllow: ['HOME'], hostEnv: env });
    return sandbox;
  };

  it('runs no fsmonitor, hook, filter or textconv, its own or a submodule-less include', async () => {
    git(ws, 'config', 'core.fsmonitor', payload('n-fsmonitor'));
    await writeFile(
      path.join(ws, 'extra.cfg'),
      `[filter "evil"]\n\tclean = "${payload('n-include')}; cat"\n`,
    );
    git(ws, 'config', 'include.path', '../extra.cfg');
    await writeFile(path.join(ws, '.gitattributes'), '*.txt filter=evil diff=evil\n');
    git(ws, 'config', 'diff.evil.textconv', `sh -c '${payload('n-textconv')}; cat "$0"'`);
    await executable(path.join(ws, '.git', 'hooks', 'pre-commit'), payload('n-hook'));
    await executable(path.join(ws, '.git', 'hooks', 'post-index-change'), payload('n-index-hook'));
    await writeFile(path.join(ws, 'a.txt'), 'changed\n');
    const call = await tools(await make());
    expect((await call('git_status')).ok).toBe(true);
    expect((await call('git_diff')).ok).toBe(true);
    expect((await call('git_add', { paths: ['a.txt'] })).ok).toBe(true);
    const committed = await call('git_commit', { message: 'x' });
    expect(committed.ok, committed.output).toBe(true);
    for (const name of ['n-fsmonitor', 'n-include', 'n-textconv', 'n-hook', 'n-index-hook']) {
      expect(ranAtAll(name), name).toBe(false);
      expect(ranOnHost(name), name).toBe(false);
    }
  });

  it("runs no submodule's fsmonitor", async () => {
    await dirtySubmoduleWithFsmonitor('n-subfsmonitor');
    expect((await (await tools(await make()))('git_status')).ok).toBe(true);
    expect(ranAtAll('n-subfsmonitor')).toBe(false);
  });

  redirectionCases(make);
});
