import { mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findExecutable, shellJoin } from '../../src/sandbox/host-command.js';
import {
  DEFAULT_ADDRESS_SPACE_MB,
  limitedArgv,
  limitsFor,
  type ResourceLimits,
} from '../../src/sandbox/limits.js';
import { createNoneSandbox, NO_SANDBOX_WARNING } from '../../src/sandbox/none.js';
import { findShell, runProcess } from '../../src/sandbox/process.js';
import { createSandbox } from '../../src/sandbox/select.js';

const prlimit = findExecutable('prlimit', process.env.PATH);
const shell = findShell(process.env.PATH ?? '/usr/bin:/bin');

let dir: string;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-none-')));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const limitedCommand = (command: string, limits: ResourceLimits, prlimit: string | null, shell: string) =>
  `exec ${shellJoin(limitedArgv([shell, '-c', command], limits, prlimit))}`;

const small: ResourceLimits = {
  cpuSeconds: 7,
  addressSpaceBytes: 1024 * 1024 * 1024,
  fileSizeBytes: 64 * 1024,
};

describe('limitsFor', () => {
  it('derives CPU time from the timeout and memory from the option', () => {
    expect(limitsFor(120_000)).toEqual({
      cpuSeconds: 125,
      addressSpaceBytes: DEFAULT_ADDRESS_SPACE_MB * 1024 * 1024,
      fileSizeBytes: 4096 * 1024 * 1024,
    });
    expect(limitsFor(1500, 2048).addressSpaceBytes).toBe(2048 * 1024 * 1024);
  });
});

describe('limitedArgv', () => {
  it('builds a prlimit line when prlimit exists, a ulimit prefix otherwise', () => {
    expect(limitedCommand("echo 'hi'", small, '/usr/bin/prlimit', '/bin/bash')).toBe(
      `exec /usr/bin/prlimit --cpu=7 --as=1073741824 --fsize=65536 -- /bin/bash -c 'echo '\\''hi'\\'''`,
    );
    expect(limitedCommand('echo hi', small, null, '/bin/bash')).toBe(
      `exec /bin/sh -c 'ulimit -t 7 2>/dev/null; ulimit -v 1048576 2>/dev/null; ulimit -f 128 2>/dev/null; exec "$@"' sh /bin/bash -c 'echo hi'`,
    );
  });

  for (const via of ['prlimit', 'ulimit'] as const) {
    it.skipIf(via === 'prlimit' && prlimit === null)(
      `applies the limits for real through ${via}`,
      async () => {
        const command = limitedCommand(
          'ulimit -t; ulimit -v; ulimit -f; head -c 200000 /dev/zero > big; echo "written $?"',
          small,
          via === 'prlimit' ? prlimit : null,
          shell,
        );
        const r = await runProcess({ command, cwd: dir, timeoutMs: 10_000 });
        expect(r.output).toMatch(/^7\n1048576\n64\n/);
        expect(r.output).not.toContain('written 0');
        expect((await stat(path.join(dir, 'big'))).size).toBeLessThanOrEqual(64 * 1024);
      },
    );
  }
});

describe('none backend', () => {
  it('runs on the host with a filtered environment and limits', async () => {
    process.env.FAKE_SECRET = 'do-not-pass';
    try {
      const sandbox = await createNoneSandbox({ workspace: dir, network: false, envAllow: [] });
      const r = await sandbox.exec({ command: 'env; ulimit -f; echo hi > f', cwd: dir, timeoutMs: 5000 });
      expect(r.exitCode).toBe(0);
      expect(r.output).not.toContain('do-not-pass');
      expect(r.output).toContain('HEARTH_SANDBOXED=none');
      expect(r.output).toMatch(/^4194304$/m);
      expect(sandbox.description).toMatch(/NOT SANDBOXED/);
    } finally {
      delete process.env.FAKE_SECRET;
    }
  });

  it('comes with a loud warning', async () => {
    const choice = await createSandbox('none', { workspace: dir, network: false, envAllow: [] });
    expect(choice.sandbox.kind).toBe('none');
    expect(choice.reason).toBe('none: requested');
    expect(choice.warning).toBe(NO_SANDBOX_WARNING);
    expect(choice.warning).toMatch(/^NO SANDBOX: the filesystem is not isolated\./);
  });
});
