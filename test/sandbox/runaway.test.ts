/**
 * Issue 38: a runaway command is stopped by the limits on a machine where Hearth runs as root, over
 * real bubblewrap through `createSandbox` (as every surface builds it): a fork bomb by the process
 * limit, a disk filler by the write limit, and whatever a command left running is gone once the
 * sandbox is closed. Each attack is bounded (loop counts, sizes, timeouts) so that a failing limit
 * fails the test instead of hanging or filling the machine.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectCommandGroups } from '../../src/sandbox/command-group.js';
import { createSandbox } from '../../src/sandbox/select.js';
import { superviseSandbox, writeLimitNotice } from '../../src/sandbox/supervised.js';
import type { Sandbox, SandboxOptions } from '../../src/sandbox/types.js';
import { hostProcessesWith } from '../support/processes.js';
import { waitUntil } from '../support/wait.js';
import { bwrapUnavailable, survivorsAfter } from './support.js';

const unavailable = await bwrapUnavailable();
const groups = await detectCommandGroups(process.env);

let ws: string;
beforeAll(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-runaway-')));
});
afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
});

/** Our command cgroups now present, to check none is left behind. */
function ourCgroups(): string[] {
  const dirs = new Set(['/sys/fs/cgroup/pids', '/sys/fs/cgroup/memory', '/sys/fs/cgroup/unified']);
  return [...dirs].flatMap((d) => {
    try {
      return readdirSync(d).filter((n) => n.startsWith(`hearth-${process.pid}-`));
    } catch {
      return [];
    }
  });
}

async function sandboxWith(
  opts: Partial<SandboxOptions>,
  mode: 'bwrap' | 'none' = 'bwrap',
): Promise<Sandbox> {
  return (await createSandbox(mode, { workspace: ws, network: false, envAllow: [], ...opts })).sandbox;
}

describe('the write limit (any backend, fake disk)', () => {
  it('stops a command whose writes pass the total and tells the model how to raise it', async () => {
    let used = 1000;
    const inner: Sandbox = {
      kind: 'none',
      description: 'test',
      safeguards: [],
      exec: (req) =>
        new Promise((resolve) => {
          // The "disk" grows on every sample until the sandbox halts the command.
          const grow = setInterval(() => (used += 8 * 1024 * 1024), 20);
          req.halt?.addEventListener('abort', () => {
            clearInterval(grow);
            resolve({
              output: '',
              exitCode: null,
              signal: 'SIGKILL',
              timedOut: false,
              aborted: true,
              durationMs: 0,
              truncatedBytes: 0,
            });
          });
        }),
      dispose: async () => {},
    };
    const sandbox = await superviseSandbox(inner, {
      workspace: ws,
      maxWriteMb: 20,
      measure: async () => used,
    });
    const r = await sandbox.exec({ command: 'fill', cwd: ws, timeoutMs: 60_000 });
    expect(r.aborted).toBe(false);
    expect(r.notices?.[0]).toMatch(
      /^Stopped: this command grew the disk holding the workspace by \d+ MB, past the limit of 20 MB per command \(sandbox\.max_write_mb\)/,
    );
    expect(r.notices?.[0]).toMatch(/raise sandbox\.max_write_mb/);
    expect(sandbox.safeguards.at(-1)).toMatchObject({ name: 'disk writes', active: true });
  });

  it('says it is not enforced where the disk cannot be measured', async () => {
    const inner = await sandboxWith({}, 'none');
    const sandbox = await superviseSandbox(inner, { workspace: ws, measure: async () => null });
    expect(sandbox.safeguards.at(-1)).toMatchObject({ name: 'disk writes', active: false });
    await sandbox.dispose();
  });

  it('words a limit passed by a command that had already finished', () => {
    expect(writeLimitNotice(30 * 1024 * 1024, 20, false)).toMatch(/^This command grew .* by 30 MB/);
  });
});

describe('choosing where command groups live', () => {
  const v1 = { pids: { dir: '/cg/pids', version: 1 as const } };
  const scope = {
    user: true,
    systemdRun: '/usr/bin/systemd-run',
    systemctl: '/usr/bin/systemctl',
    env: { XDG_RUNTIME_DIR: '/run/user/1000' },
    envProgram: '/usr/bin/env',
    controllers: ['pids' as const, 'memory' as const],
  };

  it('prefers cgroup v2, then a systemd scope, then cgroup v1', async () => {
    const v2 = await detectCommandGroups(
      {},
      {
        cgroups: async () => ({ pids: { dir: '/cg', version: 2 } }),
        systemd: async () => scope,
      },
    );
    expect(v2.heldBy).toEqual({ pids: 'cgroup v2' });
    const systemd = await detectCommandGroups({}, { cgroups: async () => v1, systemd: async () => scope });
    expect(systemd.heldBy).toEqual({
      pids: 'systemd scope (user manager)',
      memory: 'systemd scope (user manager)',
    });
    const group = await systemd.open({ maxProcesses: 64, memoryBytes: 1024 });
    expect(group!.wrap(['/usr/bin/bwrap', '--', 'true'])).toMatch(
      /^exec \/usr\/bin\/env XDG_RUNTIME_DIR=\/run\/user\/1000 \/usr\/bin\/systemd-run --user --scope --quiet --collect --unit=hearth-\d+-\d+-[0-9a-f]{6}\.scope -p TasksMax=64 -p MemoryMax=1024 -p MemorySwapMax=0 -- \/usr\/bin\/env -u XDG_RUNTIME_DIR \/usr\/bin\/bwrap -- true$/,
    );
    const fallback = await detectCommandGroups({}, { cgroups: async () => v1, systemd: async () => null });
    expect(fallback.heldBy).toEqual({ pids: 'cgroup v1' });
  });
});

describe.skipIf(unavailable !== null)(
  `runaway commands under bubblewrap${unavailable ? ` - SKIPPED: ${unavailable}` : ''}`,
  () => {
    it('stops a fork bomb at the process limit, and leaves no cgroup behind', async () => {
      const sandbox = await sandboxWith({ maxProcesses: 64 });
      try {
        const processes = sandbox.safeguards.find((g) => g.name === 'processes')!;
        if (groups.heldBy.pids === undefined && process.getuid?.() === 0) {
          // Nothing can hold it here: it must be said, not pretended.
          expect(processes).toMatchObject({ active: false });
          return;
        }
        expect(processes).toMatchObject({ active: true, detail: expect.stringMatching(/^64 at once/) });
        // dash (sh) gives up at the first failed fork, where bash would retry for many seconds.
        // Bounded at 2000 sleepers of 60 s, all killed when the command ends.
        const r = await sandbox.exec({
          command: "sh -c 'i=0; while [ $i -lt 2000 ]; do sleep 60 & i=$((i+1)); echo started=$i; done'",
          cwd: ws,
          timeoutMs: 60_000,
        });
        const started = Math.max(0, ...[...r.output.matchAll(/started=(\d+)/g)].map((m) => Number(m[1])));
        expect(started).toBeGreaterThan(10);
        expect(started).toBeLessThan(64);
        expect(r.output).toMatch(/Cannot fork|Resource temporarily unavailable/);
        if (groups.heldBy.pids?.startsWith('cgroup'))
          expect(r.notices?.join('\n')).toMatch(
            /This command hit the limit of 64 processes at once \(sandbox\.max_processes\): \d+ of its attempts/,
          );
        expect(ourCgroups()).toEqual([]);
      } finally {
        await sandbox.dispose();
      }
    });

    it('stops a disk filler past the write limit and tells the model', async () => {
      const sandbox = await sandboxWith({ maxWriteMb: 20 });
      try {
        // Up to 400 MB, 1 MB at a time: far past 20 MB, bounded if the limit failed.
        const r = await sandbox.exec({
          command:
            'i=0; while [ $i -lt 400 ]; do head -c 1048576 /dev/zero >> fill || break; i=$((i+1)); done; echo finished=$i',
          cwd: ws,
          timeoutMs: 120_000,
        });
        expect(r.output).not.toMatch(/finished=/);
        expect(r.notices?.join('\n')).toMatch(
          /Stopped: this command grew the disk holding the workspace by \d+ MB, past the limit of 20 MB/,
        );
        expect((await stat(path.join(ws, 'fill'))).size).toBeLessThan(400 * 1024 * 1024);
        expect(sandbox.safeguards.find((g) => g.name === 'disk writes')).toMatchObject({
          active: true,
          detail: expect.stringMatching(/^20 MB per command/),
        });
      } finally {
        await sandbox.dispose();
        await rm(path.join(ws, 'fill'), { force: true });
      }
    });

    for (const mode of ['bwrap', 'none'] as const) {
      it(`stops a long-lived interpreter and its background processes when closed (${mode})`, async () => {
        const sandbox = await sandboxWith({}, mode);
        const marker = `hearth-bg-${randomBytes(4).toString('hex')}`;
        // An interpreter that lives on (as the python tool's does), with a sleeper of its own that
        // leaves the process group (setsid), and a plain background job. The sleeper's shell is bash:
        // dash (Debian's sh) has no `exec -a`, and the count below would catch its failing shell only by luck.
        const running = sandbox.exec({
          command:
            `(exec -a ${marker} sleep 1000) & setsid bash -c 'exec -a ${marker} sleep 1000' & ` +
            `exec python3 -c "import sys, time; sys.argv[0] = '${marker}'; time.sleep(1000)" ${marker}`,
          cwd: ws,
          timeoutMs: 600_000,
        });
        await waitUntil(
          () => hostProcessesWith(marker).length >= 3,
          'the interpreter and its sleepers',
          20_000,
        );
        await sandbox.dispose();
        const r = await running;
        expect(r.aborted).toBe(true);
        expect(await survivorsAfter(marker)).toEqual([]);
        expect(ourCgroups()).toEqual([]);
      });
    }
  },
);
