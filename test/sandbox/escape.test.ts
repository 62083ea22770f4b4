import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { link, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBwrapSandbox } from '../../src/sandbox/bwrap.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { ManualClock } from '../support/manual-clock.js';
import { waitUntil } from '../support/wait.js';
import { bwrapUnavailable, hostProcessesWith, killAll, survivorsAfter } from './support.js';

const unavailable = await bwrapUnavailable();
if (unavailable) console.warn(`escape battery skipped: bwrap unusable here: ${unavailable}`);

const tag = randomBytes(6).toString('hex');
const SECRET = `fake-secret-${tag}`;
const HOME_SECRET_TEXT = `home-secret-${tag}`;
const SIBLING_TEXT = `sibling-secret-${tag}`;

let root: string;
let ws: string;
let sibling: string;
let homeSecret: string;
let sandbox: Sandbox;
let netSandbox: Sandbox;
let server: net.Server;
let port: number;
const received: string[] = [];

const run = (command: string, sb: Sandbox = sandbox, timeoutMs = 10_000) =>
  sb.exec({ command, cwd: ws, timeoutMs });

const git = (...args: string[]) =>
  execFileSync('git', ['-C', ws, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Host',
      GIT_AUTHOR_EMAIL: 'host@example.invalid',
      GIT_COMMITTER_NAME: 'Host',
      GIT_COMMITTER_EMAIL: 'host@example.invalid',
    },
  });

describe.skipIf(unavailable !== null)(
  `sandbox escape battery (bwrap)${unavailable ? ` - SKIPPED: ${unavailable}` : ''}`,
  () => {
    beforeAll(async () => {
      root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-escape-')));
      ws = path.join(root, 'ws');
      await mkdir(ws);
      sibling = path.join(root, 'sibling-secret.txt');
      await writeFile(sibling, SIBLING_TEXT);
      homeSecret = path.join(os.homedir(), `.hearth-escape-test-secret-${tag}`);
      await writeFile(homeSecret, HOME_SECRET_TEXT);

      git('init', '-q');
      await writeFile(path.join(ws, 'README.md'), 'hello\n');
      await writeFile(path.join(ws, '.bashrc'), 'echo original\n');
      await mkdir(path.join(ws, '.hearth'));
      await writeFile(path.join(ws, '.hearth', 'config.json'), '{}\n');
      git('add', 'README.md');
      git('commit', '-qm', 'initial');

      process.env.FAKE_SECRET = SECRET;
      sandbox = await createBwrapSandbox({ workspace: ws, network: false, envAllow: [] });
      netSandbox = await createBwrapSandbox({ workspace: ws, network: true, envAllow: [] });

      server = net.createServer((socket) => {
        socket.on('data', (d) => received.push(d.toString()));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as net.AddressInfo).port;
    });

    afterAll(async () => {
      delete process.env.FAKE_SECRET;
      server?.close();
      await sandbox?.dispose();
      await netSandbox?.dispose();
      if (homeSecret) await rm(homeSecret, { force: true });
      // Whatever a failed attempt may have left on the host.
      const artifacts = [
        `/usr/hearth-pwned-${tag}`,
        `/usr/hearth-remount-${tag}`,
        path.join(os.homedir(), `planted-${tag}`),
        path.join(os.tmpdir(), `hearth-escape-tmp-${tag}`),
        path.join(os.tmpdir(), `hearth-escape-proc-${tag}`),
        path.join(os.tmpdir(), `hearth-escape-proc-${tag}-1`),
      ];
      for (const artifact of artifacts) await rm(artifact, { force: true });
      if (root) await rm(root, { recursive: true, force: true });
    });

    it('control: writes inside the workspace reach the host, system binaries run', async () => {
      const r = await run(
        'echo inside > made-inside.txt && /usr/bin/env true && head -c 4 /usr/bin/env | od -c | head -1',
      );
      expect(r.exitCode).toBe(0);
      expect(r.output).toContain('E   L   F');
      expect(await readFile(path.join(ws, 'made-inside.txt'), 'utf8')).toBe('inside\n');
    });

    it('cannot read /etc/shadow or /etc/gshadow', async () => {
      const r = await run('cat /etc/shadow /etc/gshadow /etc/shadow- 2>&1; ls /etc/sudoers.d 2>&1');
      expect(r.output).not.toMatch(/^root:/m);
      if (process.getuid?.() === 0) expect(readFileSync('/etc/shadow', 'utf8')).toMatch(/^root:/m);
    });

    it("cannot see the user's home", async () => {
      const read = await run(`cat ${homeSecret} ~/${path.basename(homeSecret)} ~/.ssh/id_rsa`);
      expect(read.output).not.toContain(HOME_SECRET_TEXT);
      const listed = await run(`ls -A ${os.homedir()} ~ 2>/dev/null`);
      expect(listed.output).not.toContain(path.basename(homeSecret));
    });

    it("cannot list other users' homes", async () => {
      const r = await run('ls -A /home/ /home/* 2>&1; ls -A /root 2>&1');
      // The user's own home may show up as the empty directory that hides it; nobody else's may.
      const own = path.dirname(os.homedir()) === '/home' ? path.basename(os.homedir()) : null;
      const others = (existsSync('/home') ? readdirSync('/home') : []).filter((u) => u !== own);
      for (const user of others) expect(r.output).not.toContain(user);
      if (own !== null) expect((await run(`ls -A ${os.homedir()}`)).output).toBe('');
    });

    it('cannot read next to the workspace', async () => {
      const r = await run(`cat ../sibling-secret.txt ${sibling}; ls -A ..`);
      expect(r.output).not.toContain(SIBLING_TEXT);
      expect(r.output).not.toContain('sibling-secret.txt\n');
    });

    it('cannot write outside the workspace', async () => {
      const hostTmp = path.join(os.tmpdir(), `hearth-escape-tmp-${tag}`);
      const procTmp = path.join(os.tmpdir(), `hearth-escape-proc-${tag}`);
      await run(
        `echo pwned > ../escaped.txt; echo pwned > ${hostTmp}; echo pwned > /proc/self/root${procTmp}; ` +
          `echo pwned > /proc/1/root${procTmp}-1; echo pwned >> /etc/hostname; echo pwned > /usr/hearth-pwned-${tag}`,
      );
      expect(existsSync(path.join(root, 'escaped.txt'))).toBe(false);
      expect(existsSync(hostTmp)).toBe(false);
      expect(existsSync(procTmp)).toBe(false);
      expect(existsSync(`${procTmp}-1`)).toBe(false);
      expect(existsSync(`/usr/hearth-pwned-${tag}`)).toBe(false);
    });

    it('cannot read the host through /proc/self/root', async () => {
      const r = await run(
        `cat /proc/self/root${homeSecret} /proc/1/root${homeSecret} /proc/self/root${sibling}`,
      );
      expect(r.output).not.toContain(HOME_SECRET_TEXT);
      expect(r.output).not.toContain(SIBLING_TEXT);
    });

    it('cannot write through a symlink planted in the workspace', async () => {
      await run(
        `ln -s ${sibling} out-link && echo pwned > out-link; ln -s ${os.homedir()} home-link; echo pwned > home-link/planted-${tag}`,
      );
      expect(await readFile(sibling, 'utf8')).toBe(SIBLING_TEXT);
      expect(existsSync(path.join(os.homedir(), `planted-${tag}`))).toBe(false);
      // On the next call too: the links now exist on the host before the sandbox starts.
      await run(`echo pwned > out-link; echo pwned > home-link/planted-${tag}`);
      expect(await readFile(sibling, 'utf8')).toBe(SIBLING_TEXT);
      expect(existsSync(path.join(os.homedir(), `planted-${tag}`))).toBe(false);
    });

    it('cannot hard-link an outside file into the workspace', async () => {
      const r = await run(`ln ${sibling} hard-1 && echo LINKED-1; ln /etc/passwd hard-2 && echo LINKED-2`);
      expect(r.output).not.toContain('LINKED');
      expect(existsSync(path.join(ws, 'hard-1'))).toBe(false);
      expect(await readFile(sibling, 'utf8')).toBe(SIBLING_TEXT);
    });

    it('has no network with network off, and has it with network on', async () => {
      const off = await run(`echo off-${tag} > /dev/tcp/127.0.0.1/${port} && echo SENT`);
      expect(off.output).not.toContain('SENT');
      const on = await run(`echo on-${tag} > /dev/tcp/127.0.0.1/${port} && echo SENT`, netSandbox);
      expect(on.output).toContain('SENT');
      await waitUntil(() => received.join('').includes(`on-${tag}`), 'the data sent with network on');
      expect(received.join('')).not.toContain(`off-${tag}`);
    });

    it('leaves no background process alive after the call', async () => {
      const marker = `hearth-bg-${tag}`;
      // Returning at all shows the call did not wait for the 300-second sleeps.
      const r = await run(
        `(exec -a ${marker}-a sleep 300 &); ` +
          `setsid bash -c 'exec -a ${marker}-b sleep 300' & ` +
          `nohup bash -c 'exec -a ${marker}-c sleep 300' >/dev/null 2>&1 & ` +
          `setsid -f bash -c 'exec -a ${marker}-d sleep 300' >/dev/null 2>&1; ` +
          // Return only once all four run under their names, so there is something to clean up.
          `until [ "$(pgrep -fc '^${marker}-[a-d] ')" -ge 4 ]; do sleep 0.05; done; echo launched`,
      );
      expect(r.output).toContain('launched');
      const survivors = await survivorsAfter(marker);
      killAll(survivors);
      expect(survivors).toEqual([]);
    });

    it('kills the whole tree, escaped sessions included, on timeout', async () => {
      const marker = `hearth-timeout-${tag}`;
      const clock = new ManualClock();
      const clocked = await createBwrapSandbox({ workspace: ws, network: false, envAllow: [], clock });
      const running = run(`setsid bash -c 'exec -a ${marker} sleep 300' & sleep 300`, clocked, 60_000);
      // Time out only once the escaped process runs, so the kill has something to prove.
      await waitUntil(() => hostProcessesWith(marker, true).length > 0, `a process named ${marker}`);
      clock.advance(60_000);
      const r = await running;
      await clocked.dispose();
      expect(r.timedOut).toBe(true);
      const survivors = await survivorsAfter(marker);
      killAll(survivors);
      expect(survivors).toEqual([]);
    });

    it("ends the call when the command ends, even if a process stops the sandbox's init with ptrace", async () => {
      const marker = `hearth-ptrace-${tag}`;
      // PTRACE_ATTACH (16) to PID 1 stops bwrap's init, which then can neither reap nor report.
      const nr = { x64: 101, arm64: 117 }[process.arch as 'x64' | 'arm64'];
      const r = await run(
        `(exec -a ${marker} perl -e 'syscall(${nr}, 16, 1, 0, 0); sleep 300' &); sleep 0.5; echo done; exit 3`,
        sandbox,
        20_000,
      );
      expect(r).toMatchObject({ timedOut: false, exitCode: 3 });
      expect(r.output).toContain('done');
      const survivors = await survivorsAfter(marker);
      killAll(survivors);
      expect(survivors).toEqual([]);
    });

    it("does not pass the host's secrets in the environment", async () => {
      const r = await run('env; cat /proc/1/environ 2>/dev/null | tr "\\0" "\\n"');
      expect(r.output).not.toContain('FAKE_SECRET');
      expect(r.output).not.toContain(SECRET);
      expect(r.output).toMatch(/^HOME=/m);
    });

    it('cannot change git hooks, git config, the agent config or shell start-up files', async () => {
      const r = await run(
        'echo evil > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; echo "[core] fsmonitor = evil" >> .git/config; ' +
          'echo evil > .hearth/config.json; echo evil > .hearth/other.json; echo evil >> .bashrc; ' +
          'git config core.hooksPath /tmp/evil; ' +
          'mv .git .git-moved; rm -rf .git/hooks; mv .hearth .hearth-moved; rm -f .bashrc; true',
      );
      expect(r.exitCode).toBe(0);
      expect(existsSync(path.join(ws, '.git/hooks/pre-commit'))).toBe(false);
      expect(await readFile(path.join(ws, '.git/config'), 'utf8')).not.toMatch(/evil/);
      expect(await readFile(path.join(ws, '.hearth/config.json'), 'utf8')).toBe('{}\n');
      expect(existsSync(path.join(ws, '.hearth/other.json'))).toBe(false);
      expect(await readFile(path.join(ws, '.bashrc'), 'utf8')).toBe('echo original\n');
      expect(existsSync(path.join(ws, '.git-moved'))).toBe(false);
      expect(existsSync(path.join(ws, '.hearth-moved'))).toBe(false);
    });

    it('cannot undo the read-only mounts', async () => {
      const r = await run(
        'umount .git/hooks; umount -l /etc/shadow; mount -o remount,rw,bind .git/hooks; mount -o remount,rw,bind /usr; ' +
          `echo evil > .git/hooks/post-checkout; echo evil > /usr/hearth-remount-${tag}; cat /etc/shadow; ` +
          'unshare -Urm sh -c "umount .git/hooks; echo evil > .git/hooks/post-merge" && echo NESTED-USERNS; true',
      );
      expect(r.output).not.toContain('NESTED-USERNS');
      expect(r.output).not.toMatch(/^root:/m);
      expect(existsSync(path.join(ws, '.git/hooks/post-checkout'))).toBe(false);
      expect(existsSync(path.join(ws, '.git/hooks/post-merge'))).toBe(false);
      expect(existsSync(`/usr/hearth-remount-${tag}`)).toBe(false);
    });

    it('cannot create .git/hooks or .hearth when they do not exist yet', async () => {
      await rm(path.join(ws, '.git/hooks'), { recursive: true, force: true });
      await rm(path.join(ws, '.hearth'), { recursive: true, force: true });
      await run(
        'mkdir -p .git/hooks .hearth; echo evil > .git/hooks/pre-commit; echo "{}" > .hearth/config.json',
      );
      expect(existsSync(path.join(ws, '.git/hooks/pre-commit'))).toBe(false);
      expect(existsSync(path.join(ws, '.hearth/config.json'))).toBe(false);
      await mkdir(path.join(ws, '.hearth'), { recursive: true });
      await writeFile(path.join(ws, '.hearth', 'config.json'), '{}\n');
    });

    it('cannot keep a start-up file it creates while absent, however it spells it', async () => {
      const absent = ['.zshrc', '.envrc', '.profile', '.bash_login', '.zlogin', '.bash_logout'];
      for (const name of absent) await rm(path.join(ws, name), { recursive: true, force: true });
      const r = await run(
        'echo evil > .zshrc; ln -s /tmp .envrc; cp /etc/hostname .profile; mkdir .bash_login; ' +
          'echo x > plain; ln plain .zlogin; (sleep 0.2; echo late > .bash_logout) & true',
      );
      for (const name of absent) expect(existsSync(path.join(ws, name)), name).toBe(false);
      expect(r.notices?.join('\n')).toMatch(
        /Removed \.zshrc: it runs outside the sandbox \(a shell start-up file\)/,
      );
      await rm(path.join(ws, 'plain'), { force: true });
    });

    it('refuses to run commands while a protected file has another hard link', async () => {
      await writeFile(path.join(ws, 'plain'), 'echo planted\n');
      await link(path.join(ws, 'plain'), path.join(ws, '.zshenv'));
      try {
        await expect(run('echo hello')).rejects.toThrow(/\.zshenv has another hard link/);
      } finally {
        await rm(path.join(ws, '.zshenv'), { force: true });
        await rm(path.join(ws, 'plain'), { force: true });
      }
      expect((await run('echo hello')).output).toBe('hello\n');
    });

    it('protects a hooks directory inside the worktree (core.hooksPath)', async () => {
      git('config', 'core.hooksPath', '.husky');
      try {
        await run('mkdir -p .husky; echo evil > .husky/pre-commit');
        expect(existsSync(path.join(ws, '.husky/pre-commit'))).toBe(false);
      } finally {
        git('config', '--unset', 'core.hooksPath');
      }
    });

    it('does not follow a start-up file planted as a symlink out of the workspace', async () => {
      await run(`ln -s ${os.homedir()} .zshrc`);
      const r = await run(`cat .zshrc/${path.basename(homeSecret)}; ls -A ${os.homedir()}`);
      expect(r.output).not.toContain(HOME_SECRET_TEXT);
      await rm(path.join(ws, '.zshrc'), { force: true });
    });

    it('runs git status, add and commit with the host identity', async () => {
      let identity: string;
      try {
        identity = git('config', '--get', 'user.name').trim();
      } catch {
        // A machine without a global identity: the repository's own must reach the sandbox too.
        git('config', 'user.name', 'Escape Tester');
        git('config', 'user.email', 'tester@example.invalid');
        identity = 'Escape Tester';
      }
      const r = await run(
        'git status --short && echo change > change.txt && git add change.txt && git commit -qm "from the sandbox" && ' +
          'git log -1 --format="%an|%s"',
      );
      expect(r.exitCode).toBe(0);
      expect(r.output).toContain(`${identity}|from the sandbox`);
      expect(git('log', '-1', '--format=%s').trim()).toBe('from the sandbox');
    });
  },
);
