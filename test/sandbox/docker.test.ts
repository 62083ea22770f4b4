import { spawn } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  buildContainerExecArgs,
  buildContainerReapArgs,
  buildContainerRunArgs,
  type ContainerPlan,
  containerName,
  detectEngine,
  planFingerprint,
} from '../../src/sandbox/docker.js';
import { runProcess } from '../../src/sandbox/process.js';
import { createSandbox } from '../../src/sandbox/select.js';
import { SandboxError } from '../../src/sandbox/types.js';

const plan = (over: Partial<ContainerPlan> = {}): ContainerPlan => ({
  engine: 'docker',
  name: containerName('/home/u/proj'),
  image: 'node:20-bookworm',
  workspace: '/home/u/proj',
  network: false,
  memoryMb: 512,
  cpus: 1,
  maxProcesses: 1024,
  tmpMb: 512,
  uid: 1000,
  gid: 1000,
  protect: {
    pinned: ['/home/u/proj/.git'],
    readOnly: ['/home/u/proj/.git/hooks', '/home/u/proj/.hearth'],
    existing: [],
  },
  extraReadOnly: [],
  ...over,
});

function valueAfter(args: string[], flag: string): string[] {
  return args.flatMap((a, i) => (a === flag ? [args[i + 1] ?? ''] : []));
}

describe('container naming', () => {
  it('derives a stable name per workspace', () => {
    expect(containerName('/home/u/proj')).toMatch(/^hearth-[0-9a-f]{12}$/);
    expect(containerName('/home/u/proj')).toBe(containerName('/home/u/proj'));
    expect(containerName('/home/u/other')).not.toBe(containerName('/home/u/proj'));
  });

  it('fingerprints the settings so a changed container is replaced', () => {
    expect(planFingerprint(plan())).toBe(planFingerprint(plan()));
    expect(planFingerprint(plan({ network: true }))).not.toBe(planFingerprint(plan()));
    expect(planFingerprint(plan({ image: 'debian:12' }))).not.toBe(planFingerprint(plan()));
  });
});

describe('buildContainerRunArgs', () => {
  it('locks the container down and mounts only the workspace at the same path', () => {
    const args = buildContainerRunArgs(plan());
    expect(args.slice(0, 4)).toEqual(['run', '--detach', '--name', plan().name]);
    expect(args).toContain('--read-only');
    expect(args).toContain('--init');
    expect(valueAfter(args, '--tmpfs')).toEqual(['/tmp:rw,exec,mode=1777,size=512m']);
    expect(valueAfter(args, '--pids-limit')).toEqual(['1024']);
    expect(valueAfter(args, '--cap-drop')).toEqual(['ALL']);
    expect(valueAfter(args, '--security-opt')).toEqual(['no-new-privileges']);
    expect(valueAfter(args, '--memory')).toEqual(['512m']);
    expect(valueAfter(args, '--cpus')).toEqual(['1']);
    expect(valueAfter(args, '--network')).toEqual(['none']);
    expect(valueAfter(args, '--user')).toEqual(['1000:1000']);
    expect(valueAfter(args, '--volume')).toEqual([
      '/home/u/proj:/home/u/proj',
      '/home/u/proj/.git:/home/u/proj/.git',
      '/home/u/proj/.git/hooks:/home/u/proj/.git/hooks:ro',
      '/home/u/proj/.hearth:/home/u/proj/.hearth:ro',
    ]);
    expect(args.slice(-3)).toEqual(['node:20-bookworm', 'sleep', 'infinity']);
  });

  it('honours network, limits and rootless podman', () => {
    const args = buildContainerRunArgs(plan({ engine: 'podman', network: true, memoryMb: 2048, cpus: 2.5 }));
    expect(args).not.toContain('--network');
    expect(valueAfter(args, '--memory')).toEqual(['2048m']);
    expect(valueAfter(args, '--cpus')).toEqual(['2.5']);
    expect(valueAfter(args, '--userns')).toEqual(['keep-id']);
    expect(args).not.toContain('--user');
  });
});

describe('buildContainerExecArgs', () => {
  it('runs in the cwd with the sandbox env (not the host PATH) and a mark for cleanup', () => {
    const args = buildContainerExecArgs({
      name: 'hearth-x',
      cwd: '/home/u/proj/src',
      env: { PATH: '/host/bin', HOME: '/tmp/home', LANG: 'C' },
      execId: 'id-1',
      command: 'npm test',
    });
    expect(args.slice(0, 3)).toEqual(['exec', '--workdir', '/home/u/proj/src']);
    expect(valueAfter(args, '--env')).toEqual(['HOME=/tmp/home', 'LANG=C', 'HEARTH_EXEC_ID=id-1']);
    expect(args.at(-1)).toBe('npm test');
  });

  it('has a launcher that creates HOME and hands the command to bash untouched', async () => {
    const args = buildContainerExecArgs({ name: 'n', cwd: '/', env: {}, execId: 'i', command: 'x' });
    const launcherAt = args.indexOf('-c') + 1;
    const home = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-launch-')));
    try {
      const tricky = `echo "$HOME" "it's" '$((1+1))' $((1+1)); echo "$BASH_VERSION" | cut -c1`;
      const r = await runProcess({
        command: ['sh', '-c', args[launcherAt] ?? '', 'sh', tricky]
          .map((w) => `'${w.replaceAll("'", `'\\''`)}'`)
          .join(' '),
        cwd: home,
        env: { PATH: process.env.PATH, HOME: path.join(home, 'made') },
        timeoutMs: 5000,
      });
      expect(r.output).toBe(`${path.join(home, 'made')} it's $((1+1)) 2\n5\n`);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe('buildContainerReapArgs', () => {
  let marked: ReturnType<typeof spawn> | undefined;

  afterEach(() => {
    marked?.kill('SIGKILL');
  });

  it('kills exactly the processes that carry the exec mark', async () => {
    marked = spawn('sleep', ['60'], { env: { ...process.env, HEARTH_EXEC_ID: 'reap-me' }, stdio: 'ignore' });
    const other = spawn('sleep', ['60'], {
      env: { ...process.env, HEARTH_EXEC_ID: 'keep-me' },
      stdio: 'ignore',
    });
    try {
      const exited = new Promise((resolve) => marked?.on('exit', (_code, signal) => resolve(signal)));
      const args = buildContainerReapArgs('hearth-x', 'reap-me');
      expect(args.slice(0, 4)).toEqual(['exec', 'hearth-x', 'sh', '-c']);
      // The script is plain sh, so it can be tried on the host against real processes.
      const r = await runProcess({
        command: `sh -c '${(args[4] ?? '').replaceAll("'", `'\\''`)}'`,
        cwd: os.tmpdir(),
        timeoutMs: 10_000,
      });
      expect(r.exitCode).toBe(0);
      expect(await exited).toBe('SIGKILL');
      expect(other.exitCode).toBeNull();
      expect(other.signalCode).toBeNull();
    } finally {
      other.kill('SIGKILL');
    }
  });
});

describe('engine detection', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-docker-')));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('says clearly when an engine is missing or not running', async () => {
    for (const engine of ['docker', 'podman'] as const) {
      const found = await detectEngine(engine);
      if (found.ok) continue;
      expect(found.reason).toMatch(
        new RegExp(`^${engine} (not installed|is installed but not running \\(.+\\))$`),
      );
    }
  });

  it('fails an explicit docker mode with that reason when docker does not run', async () => {
    const found = await detectEngine('docker');
    if (found.ok) return;
    const attempt = createSandbox('docker', { workspace: dir, network: false, envAllow: [] });
    await expect(attempt).rejects.toThrow(SandboxError);
    await expect(attempt).rejects.toThrow(found.reason);
  });
});
