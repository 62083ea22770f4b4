import { execFileSync } from 'node:child_process';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  buildSandboxEnv,
  envNameAllowed,
  FALLBACK_PATH,
  hostGitIdentity,
  identityGitconfig,
} from '../../src/sandbox/env.js';

describe('buildSandboxEnv', () => {
  const source = {
    PATH: '/usr/bin:/bin',
    LANG: 'en_US.UTF-8',
    LC_ALL: 'C',
    LC_CTYPE: 'C.UTF-8',
    TERM: 'xterm',
    TZ: 'Europe/Paris',
    HOME: '/home/alice',
    USER: 'alice',
    OPENAI_API_KEY: 'sk-secret',
    AWS_SECRET_ACCESS_KEY: 'aws-secret',
    GITHUB_TOKEN: 'ghp-secret',
    SSH_AUTH_SOCK: '/run/user/1000/ssh-agent',
    NODE_OPTIONS: '--require /tmp/evil.js',
    CARGO_HOME: '/home/alice/.cargo',
    BASH_ENV: '/tmp/evil.sh',
    LD_PRELOAD: '/tmp/evil.so',
  };

  it('passes only the base allowlist and sets the sandbox identity', () => {
    const env = buildSandboxEnv({ source, allow: [], home: '/sandbox/home', user: 'alice' });
    expect(env).toEqual({
      PATH: '/usr/bin:/bin',
      LANG: 'en_US.UTF-8',
      LC_ALL: 'C',
      LC_CTYPE: 'C.UTF-8',
      TERM: 'xterm',
      TZ: 'Europe/Paris',
      HOME: '/sandbox/home',
      USER: 'alice',
      LOGNAME: 'alice',
    });
  });

  it('adds configured names and prefixes, never the code-running ones', () => {
    const env = buildSandboxEnv({
      source,
      allow: ['CARGO_*', 'GITHUB_TOKEN', 'BASH_ENV', 'LD_*'],
      home: '/h',
      user: 'alice',
    });
    expect(env.CARGO_HOME).toBe('/home/alice/.cargo');
    expect(env.GITHUB_TOKEN).toBe('ghp-secret');
    expect(env.BASH_ENV).toBeUndefined();
    expect(env.LD_PRELOAD).toBeUndefined();
    expect(env.OPENAI_API_KEY).toBeUndefined();
    expect(env.SSH_AUTH_SOCK).toBeUndefined();
    expect(env.NODE_OPTIONS).toBeUndefined();
  });

  it('lets extra values win and supplies a PATH when the host has none', () => {
    const env = buildSandboxEnv({
      source: { LANG: 'C' },
      allow: [],
      home: '/h',
      user: 'u',
      extra: { TMPDIR: '/tmp', HOME: '/other' },
    });
    expect(env).toMatchObject({ PATH: FALLBACK_PATH, TMPDIR: '/tmp', HOME: '/other' });
  });

  it('matches names exactly or by prefix', () => {
    expect(envNameAllowed('LC_TIME', ['LC_*'])).toBe(true);
    expect(envNameAllowed('LCX', ['LC_*'])).toBe(false);
    expect(envNameAllowed('PATHX', ['PATH'])).toBe(false);
    expect(envNameAllowed('BASH_FUNC_ls%%', ['BASH_*'])).toBe(false);
  });
});

describe('hostGitIdentity', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-ident-')));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  // HOME and XDG_CONFIG_HOME point at the test's own files, so the result does not depend on the machine.
  const isolated = (home: string): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    GIT_CONFIG_NOSYSTEM: '1',
  });

  it("reads the user's global identity and writes it as a config file", async () => {
    await writeFile(
      path.join(dir, '.gitconfig'),
      '[user]\n\tname = Global Person\n\temail = global@example.invalid\n',
    );
    const identity = await hostGitIdentity(isolated(dir));
    expect(identity).toEqual({ name: 'Global Person', email: 'global@example.invalid', variables: {} });
    // Read back by git itself: quoting keeps every character.
    const file = path.join(dir, 'written');
    await writeFile(file, identityGitconfig({ name: 'A "Q" #; \\ B', email: 'a@b', variables: {} })!);
    expect(execFileSync('git', ['config', '--file', file, 'user.name'], { encoding: 'utf8' })).toBe(
      'A "Q" #; \\ B\n',
    );
  });

  it("never reads the repository's config, and passes variables the user exported", async () => {
    const repo = path.join(dir, 'repo');
    execFileSync('git', ['init', '-q', repo]);
    execFileSync('git', ['-C', repo, 'config', 'user.name', 'Repo Person']);
    const previous = process.cwd();
    process.chdir(repo);
    try {
      const identity = await hostGitIdentity({ ...isolated(dir), GIT_COMMITTER_EMAIL: 'ci@example.invalid' });
      expect(identity).toEqual({ variables: { GIT_COMMITTER_EMAIL: 'ci@example.invalid' } });
    } finally {
      process.chdir(previous);
    }
  });

  it('returns nothing when there is no identity', async () => {
    const identity = await hostGitIdentity(isolated(dir));
    expect(identity).toEqual({ variables: {} });
    expect(identityGitconfig(identity)).toBeUndefined();
  });
});
