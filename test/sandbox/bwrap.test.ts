import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  chmod,
  link,
  mkdir,
  mkdtemp,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type BwrapPlan,
  buildBwrapArgs,
  createBwrapSandbox,
  FALLBACK_SANDBOX_HOME,
} from '../../src/sandbox/bwrap.js';
import { etcMasks } from '../../src/sandbox/host-layout.js';
import { afterCommand, protectWorkspace } from '../../src/sandbox/protected-paths.js';
import { SandboxError } from '../../src/sandbox/types.js';
import { ManualClock } from '../support/manual-clock.js';
import { processName, processRunning } from '../support/processes.js';
import { bwrapUnavailable } from './support.js';

const unavailable = await bwrapUnavailable();

let dir: string;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-bwrap-')));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const plan = (over: Partial<BwrapPlan> = {}): BwrapPlan => ({
  workspace: '/home/u/proj',
  cwd: '/home/u/proj/src',
  home: '/home/u',
  hideHome: '/home/u',
  network: false,
  system: [{ path: '/usr' }, { path: '/bin', symlinkTo: 'usr/bin' }, { path: '/etc' }],
  etcMasks: [
    { path: '/etc/shadow', dir: false },
    { path: '/etc/ssl/private', dir: true },
  ],
  resolvConf: '/run/systemd/resolve/stub-resolv.conf',
  extraReadOnly: ['/home/u/.nvm'],
  protect: {
    pinned: ['/home/u/proj/.git'],
    readOnly: ['/home/u/proj/.git/hooks', '/home/u/proj/.hearth'],
    existing: [],
  },
  disableUserns: true,
  tmpBytes: 512 * 1024 * 1024,
  gitconfig: '/tmp/hearth-bwrap-x/gitconfig',
  inner: ['/usr/bin/prlimit', '--cpu=10', '--', '/usr/bin/bash', '-c', 'make test'],
  ...over,
});

/** Position of the first occurrence of a run of consecutive arguments. */
function at(args: string[], ...run: string[]): number {
  for (let i = 0; i + run.length <= args.length; i++) {
    if (run.every((word, j) => args[i + j] === word)) return i;
  }
  return -1;
}

describe('buildBwrapArgs', () => {
  it('isolates everything, and shares the network only when asked', () => {
    const off = buildBwrapArgs(plan());
    for (const flag of [
      '--unshare-all',
      '--unshare-user',
      '--die-with-parent',
      '--new-session',
      '--disable-userns',
    ]) {
      expect(off).toContain(flag);
    }
    expect(at(off, '--cap-drop', 'ALL')).toBeGreaterThan(-1);
    expect(off).not.toContain('--share-net');
    expect(at(off, '--ro-bind', '/run/systemd/resolve/stub-resolv.conf')).toBe(-1);
    const on = buildBwrapArgs(plan({ network: true }));
    expect(on).toContain('--share-net');
    expect(at(on, '--ro-bind', '/run/systemd/resolve/stub-resolv.conf')).toBeGreaterThan(-1);
    expect(buildBwrapArgs(plan({ disableUserns: false }))).not.toContain('--disable-userns');
  });

  it('binds the system read-only and masks secrets after /etc', () => {
    const args = buildBwrapArgs(plan());
    expect(at(args, '--ro-bind', '/usr', '/usr')).toBeGreaterThan(-1);
    expect(at(args, '--symlink', 'usr/bin', '/bin')).toBeGreaterThan(-1);
    const etc = at(args, '--ro-bind', '/etc', '/etc');
    expect(at(args, '--ro-bind', '/dev/null', '/etc/shadow')).toBeGreaterThan(etc);
    expect(at(args, '--tmpfs', '/etc/ssl/private', '--remount-ro', '/etc/ssl/private')).toBeGreaterThan(etc);
  });

  it('hides the home, then mounts the workspace, then the protected paths, then runs the command', () => {
    const args = buildBwrapArgs(plan());
    const home = at(args, '--tmpfs', '/home/u');
    const extra = at(args, '--ro-bind-try', '/home/u/.nvm', '/home/u/.nvm');
    const ws = at(args, '--bind', '/home/u/proj', '/home/u/proj');
    const pin = at(args, '--bind', '/home/u/proj/.git', '/home/u/proj/.git');
    const hooks = at(args, '--ro-bind', '/home/u/proj/.git/hooks', '/home/u/proj/.git/hooks');
    expect(home).toBeGreaterThan(at(args, '--tmpfs', '/tmp'));
    expect(extra).toBeGreaterThan(home);
    expect(ws).toBeGreaterThan(extra);
    expect(pin).toBeGreaterThan(ws);
    expect(hooks).toBeGreaterThan(pin);
    expect(args.slice(-9)).toEqual([
      '--chdir',
      '/home/u/proj/src',
      '--',
      '/usr/bin/prlimit',
      '--cpu=10',
      '--',
      '/usr/bin/bash',
      '-c',
      'make test',
    ]);
  });

  it('sizes every tmpfs, gives /tmp the sticky mode, and a separate HOME when the workspace holds the home', () => {
    const size = String(512 * 1024 * 1024);
    const args = buildBwrapArgs(plan({ hideHome: null, home: FALLBACK_SANDBOX_HOME }));
    expect(at(args, '--perms', '1777', '--size', size, '--tmpfs', '/tmp')).toBeGreaterThan(-1);
    expect(at(args, '--perms', '1777', '--size', size, '--tmpfs', '/var/tmp')).toBeGreaterThan(-1);
    expect(at(args, '--tmpfs', '/home/u')).toBe(-1);
    expect(at(args, '--dir', FALLBACK_SANDBOX_HOME)).toBeGreaterThan(-1);
    expect(at(buildBwrapArgs(plan()), '--size', size, '--tmpfs', '/home/u')).toBeGreaterThan(-1);
    expect(buildBwrapArgs(plan({ tmpBytes: undefined }))).not.toContain('--size');
  });

  it("shows the user's git identity as ~/.gitconfig, read-only", () => {
    const args = buildBwrapArgs(plan());
    expect(at(args, '--ro-bind', '/tmp/hearth-bwrap-x/gitconfig', '/home/u/.gitconfig')).toBeGreaterThan(
      at(args, '--tmpfs', '/home/u'),
    );
    expect(buildBwrapArgs(plan({ gitconfig: undefined })).join(' ')).not.toContain('.gitconfig');
  });
});

describe('etcMasks', () => {
  it('masks what others cannot read plus the known secrets, and nothing below a masked directory', async () => {
    const etc = path.join(dir, 'etc');
    await mkdir(path.join(etc, 'ssl/private'), { recursive: true });
    await mkdir(path.join(etc, 'open'), { recursive: true });
    await writeFile(path.join(etc, 'passwd'), 'root:x:0:0\n');
    await writeFile(path.join(etc, 'shadow'), 'root:hash\n');
    await writeFile(path.join(etc, 'open/private.key'), 'key\n');
    await writeFile(path.join(etc, 'ssl/private/host.key'), 'key\n');
    await chmod(path.join(etc, 'open/private.key'), 0o600);
    await chmod(path.join(etc, 'ssl/private'), 0o700);
    await symlink('/etc/passwd', path.join(etc, 'link'));
    expect(await etcMasks(etc)).toEqual([
      { path: path.join(etc, 'open/private.key'), dir: false },
      { path: path.join(etc, 'shadow'), dir: false },
      { path: path.join(etc, 'ssl/private'), dir: true },
    ]);
  });
});

describe('protectWorkspace', () => {
  it('creates nothing, pins .git, and lists what exists', async () => {
    await mkdir(path.join(dir, '.git'));
    await writeFile(path.join(dir, '.git/config'), '[core]\n');
    await writeFile(path.join(dir, '.bashrc'), '');
    const layout = await protectWorkspace(dir);
    expect(layout.pinned).toEqual([path.join(dir, '.git')]);
    expect(layout.readOnly).toEqual([path.join(dir, '.bashrc'), path.join(dir, '.git/config')]);
    expect(existsSync(path.join(dir, '.hearth'))).toBe(false);
    expect(existsSync(path.join(dir, '.git/hooks'))).toBe(false);
    expect(layout.existing).toEqual(
      expect.arrayContaining([
        path.join(dir, '.bashrc'),
        path.join(dir, '.git'),
        path.join(dir, '.git/config'),
      ]),
    );
  });

  it('covers submodule git dirs and a core.hooksPath inside the workspace', async () => {
    const sub = path.join(dir, '.git/modules/libs/a');
    await mkdir(path.join(sub, 'hooks'), { recursive: true });
    await writeFile(path.join(sub, 'HEAD'), 'ref: refs/heads/main\n');
    await writeFile(path.join(sub, 'config'), '');
    await writeFile(path.join(dir, '.git/config'), '[core]\n\thooksPath = .husky\n');
    await mkdir(path.join(dir, '.husky'));
    const layout = await protectWorkspace(dir);
    expect(layout.pinned).toEqual([path.join(dir, '.git'), sub]);
    expect(layout.readOnly).toEqual(
      expect.arrayContaining([path.join(sub, 'hooks'), path.join(sub, 'config'), path.join(dir, '.husky')]),
    );
  });

  it('follows symlinks that stay inside and drops those that leave', async () => {
    await mkdir(path.join(dir, 'dotfiles'));
    await writeFile(path.join(dir, 'dotfiles/profile'), '');
    await symlink('dotfiles/profile', path.join(dir, '.profile'));
    await symlink(os.homedir(), path.join(dir, '.zshrc'));
    const layout = await protectWorkspace(dir);
    expect(layout.readOnly).toContain(path.join(dir, 'dotfiles/profile'));
    expect(layout.readOnly.some((p) => !p.startsWith(dir))).toBe(false);
  });

  it('refuses a protected file with another hard link, saying how to fix it', async () => {
    await writeFile(path.join(dir, 'innocent.txt'), 'echo planted\n');
    await link(path.join(dir, 'innocent.txt'), path.join(dir, '.envrc'));
    await expect(protectWorkspace(dir)).rejects.toThrow(
      /Refusing to run commands: the protected file \.envrc has another hard link.*find \. -samefile \.envrc/,
    );
    await mkdir(path.join(dir, '.git/hooks'), { recursive: true });
    await rm(path.join(dir, '.envrc'));
    await link(path.join(dir, 'innocent.txt'), path.join(dir, '.git/hooks/pre-commit'));
    await expect(protectWorkspace(dir)).rejects.toThrow(/\.git\/hooks\/pre-commit has another hard link/);
  });
});

describe('afterCommand', () => {
  it('removes protected names a command created, and leaves those that existed', async () => {
    await writeFile(path.join(dir, '.profile'), 'mine\n');
    const before = await protectWorkspace(dir);
    await writeFile(path.join(dir, '.bashrc'), 'evil\n');
    await symlink('/tmp', path.join(dir, '.zshenv'));
    await mkdir(path.join(dir, '.hearth'));
    await writeFile(path.join(dir, '.hearth/config.json'), '{"sandbox":"none"}');
    const notices = await afterCommand(dir, before);
    for (const name of ['.bashrc', '.zshenv', '.hearth'])
      expect(existsSync(path.join(dir, name))).toBe(false);
    expect(await readFile(path.join(dir, '.profile'), 'utf8')).toBe('mine\n');
    expect(notices.join('\n')).toMatch(
      /Removed \.bashrc: it runs outside the sandbox \(a shell start-up file\)/,
    );
    expect(notices.join('\n')).toMatch(
      /Removed \.hearth: it runs outside the sandbox \(Hearth's own settings\)/,
    );
  });

  it('keeps a repository a command created but strips its hooks and code-running settings', async () => {
    const before = await protectWorkspace(dir);
    execFileSync('git', ['init', '-q', dir]);
    await writeFile(path.join(dir, '.git/hooks/pre-commit'), '#!/bin/sh\ntouch /tmp/planted\n', {
      mode: 0o755,
    });
    execFileSync('git', ['-C', dir, 'config', 'core.fsmonitor', 'touch /tmp/planted']);
    execFileSync('git', ['-C', dir, 'config', 'filter.x.clean', 'evil']);
    execFileSync('git', ['-C', dir, 'config', 'alias.st', '!evil']);
    execFileSync('git', ['-C', dir, 'config', 'alias.co', 'checkout']);
    execFileSync('git', ['-C', dir, 'config', 'core.worktree', '..']);
    const sub = path.join(dir, '.git/modules/lib');
    await mkdir(sub, { recursive: true });
    await writeFile(path.join(sub, 'HEAD'), 'ref: refs/heads/main\n');
    await writeFile(path.join(sub, 'config'), '[core]\n\tworktree = ../../../lib\n\tpager = evil\n');
    const notices = await afterCommand(dir, before);
    expect(existsSync(path.join(dir, '.git/hooks/pre-commit'))).toBe(false);
    expect(existsSync(path.join(dir, '.git/hooks/pre-commit.sample'))).toBe(true);
    const config = await readFile(path.join(dir, '.git/config'), 'utf8');
    expect(config).not.toMatch(/fsmonitor|filter|evil/);
    expect(config).toMatch(/co = checkout/);
    expect(config).toMatch(/worktree = \.\./);
    const subConfig = await readFile(path.join(sub, 'config'), 'utf8');
    expect(subConfig).toMatch(/worktree = \.\.\/\.\.\/\.\.\/lib/);
    expect(subConfig).not.toMatch(/pager/);
    expect(notices.join('\n')).toMatch(/removed hooks\/pre-commit/);
    expect(notices.join('\n')).toMatch(/core\.fsmonitor, filter\.x\.clean, alias\.st/);
  });

  it('removes a .git file or link a command made to point at another repository', async () => {
    const before = await protectWorkspace(dir);
    await writeFile(path.join(dir, '.git'), 'gitdir: /somewhere/else/.git\n');
    const notices = await afterCommand(dir, before);
    expect(existsSync(path.join(dir, '.git'))).toBe(false);
    expect(notices[0]).toMatch(/^Removed \.git: this command made it a file or link to another repository/);
  });
});

describe.skipIf(unavailable !== null)(
  `bwrap backend${unavailable ? ` - SKIPPED: ${unavailable}` : ''}`,
  () => {
    it('captures output, exit codes and the working directory', async () => {
      await mkdir(path.join(dir, 'src'));
      const sandbox = await createBwrapSandbox({ workspace: dir, network: false, envAllow: [] });
      const r = await sandbox.exec({
        command: 'pwd; echo err >&2; exit 3',
        cwd: path.join(dir, 'src'),
        timeoutMs: 5000,
      });
      expect(r).toMatchObject({ output: `${path.join(dir, 'src')}\nerr\n`, exitCode: 3, timedOut: false });
      expect(sandbox.description).toMatch(/^bwrap \(bubblewrap [\d.]+\): .* network off$/);
    });

    it('refuses a working directory outside the workspace', async () => {
      const sandbox = await createBwrapSandbox({ workspace: dir, network: false, envAllow: [] });
      await expect(sandbox.exec({ command: 'true', cwd: os.tmpdir(), timeoutMs: 5000 })).rejects.toThrow(
        SandboxError,
      );
      await expect(
        sandbox.exec({ command: 'true', cwd: path.join(dir, 'missing'), timeoutMs: 5000 }),
      ).rejects.toThrow(/does not exist/);
    });

    it('stops on timeout and on abort, keeping the partial output', async () => {
      const clock = new ManualClock();
      const sandbox = await createBwrapSandbox({ workspace: dir, network: false, envAllow: [], clock });
      const timeoutName = processName('bwrap-timeout');
      const timing = sandbox.exec({
        command: `echo before; exec -a ${timeoutName} sleep 30`,
        cwd: dir,
        timeoutMs: 400,
      });
      await processRunning(timeoutName);
      clock.advance(400);
      expect(await timing).toMatchObject({ output: 'before\n', timedOut: true });

      const controller = new AbortController();
      const abortName = processName('bwrap-abort');
      const aborting = sandbox.exec({
        command: `echo go; exec -a ${abortName} sleep 30`,
        cwd: dir,
        timeoutMs: 30_000,
        signal: controller.signal,
      });
      await processRunning(abortName);
      controller.abort();
      expect(await aborting).toMatchObject({ output: 'go\n', aborted: true });
    });

    it('passes configured variables, and makes extra read-only paths visible', async () => {
      const tools = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-tools-')));
      try {
        await writeFile(path.join(tools, 'tool.sh'), 'echo tool ran\n');
        process.env.HEARTH_TEST_VISIBLE = 'visible';
        const sandbox = await createBwrapSandbox({
          workspace: dir,
          network: false,
          envAllow: ['HEARTH_TEST_*'],
          readOnlyPaths: [tools],
        });
        const r = await sandbox.exec({
          command: `echo "$HEARTH_TEST_VISIBLE"; sh ${tools}/tool.sh; echo x > ${tools}/new && echo WROTE`,
          cwd: dir,
          timeoutMs: 5000,
        });
        expect(r.output).toMatch(/^visible\ntool ran\n/);
        expect(r.output).not.toContain('WROTE');
      } finally {
        delete process.env.HEARTH_TEST_VISIBLE;
        await rm(tools, { recursive: true, force: true });
      }
    });

    it('gives a separate HOME when the workspace contains the home directory', async () => {
      const savedHome = process.env.HOME;
      process.env.HOME = path.join(dir, 'me');
      await mkdir(process.env.HOME);
      try {
        const sandbox = await createBwrapSandbox({ workspace: dir, network: false, envAllow: [] });
        const r = await sandbox.exec({
          command: 'echo "$HOME"; touch "$HOME/ok" && echo OK',
          cwd: dir,
          timeoutMs: 5000,
        });
        expect(r.output).toBe(`${FALLBACK_SANDBOX_HOME}\nOK\n`);
      } finally {
        process.env.HOME = savedHome;
      }
    });

    it('keeps the workspace files owned by the user', async () => {
      const sandbox = await createBwrapSandbox({ workspace: dir, network: false, envAllow: [] });
      await sandbox.exec({
        command: 'echo data > owned.txt; mkdir -p /tmp/x && echo tmp ok',
        cwd: dir,
        timeoutMs: 5000,
      });
      expect(await readFile(path.join(dir, 'owned.txt'), 'utf8')).toBe('data\n');
      expect((await stat(path.join(dir, 'owned.txt'))).uid).toBe(process.getuid?.());
    });

    it('rejects a workspace that does not exist, and the filesystem root', async () => {
      await expect(
        createBwrapSandbox({ workspace: path.join(dir, 'nope'), network: false, envAllow: [] }),
      ).rejects.toThrow(/does not exist/);
      await expect(createBwrapSandbox({ workspace: '/', network: false, envAllow: [] })).rejects.toThrow(
        /root/,
      );
    });
  },
);
