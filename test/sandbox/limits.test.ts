import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBwrapSandbox } from '../../src/sandbox/bwrap.js';
import { detectCgroups } from '../../src/sandbox/cgroup.js';
import { clampLimits, parseHardLimits, planLimits } from '../../src/sandbox/limits.js';
import type { Safeguard, Sandbox } from '../../src/sandbox/types.js';
import { bwrapUnavailable } from './support.js';

/**
 * Issue 12, class 7: resource limits under bubblewrap. The attacks are scaled down (a few hundred
 * processes, hundreds of MB) against limits set as low, so that they prove the caps without
 * straining a small test machine. Where this machine cannot enforce a limit, the sandbox must say
 * so in its safeguards, and the test checks that instead.
 */

const unavailable = await bwrapUnavailable();

let ws: string;
let sandbox: Sandbox;
const guard = (name: string): Safeguard => sandbox.safeguards.find((g) => g.name === name)!;
const run = (command: string) => sandbox.exec({ command, cwd: ws, timeoutMs: 30_000 });

describe('planLimits', () => {
  it('puts each limit where the system can hold it, and says when it cannot', () => {
    const none = planLimits({ memoryMb: 256, cpus: 1 }, {}, { root: true, tmpfsSize: false });
    expect(none.safeguards.filter((g) => !g.active).map((g) => g.name)).toEqual([
      'memory',
      'processes',
      'cpus',
      'temp space',
    ]);
    expect(none.rlimits(10_000)).toMatchObject({
      addressSpaceBytes: 256 * 1024 * 1024,
      processes: undefined,
    });
    expect(none.safeguards.find((g) => g.name === 'memory')!.detail).toMatch(/WebAssembly/);

    const user = planLimits({}, {}, { root: false, tmpfsSize: true });
    expect(user.safeguards.find((g) => g.name === 'processes')).toMatchObject({ active: true });
    expect(user.rlimits(10_000).processes).toBe(512);
    expect(user.tmpBytes).toBe(512 * 1024 * 1024);

    const cg = planLimits(
      { memoryMb: 300, maxProcesses: 64, cpus: 0.5 },
      { memory: 'cgroup v2', pids: 'cgroup v2', cpu: 'cgroup v2' },
      { root: true, tmpfsSize: true },
    );
    expect(cg.cgroup).toEqual({ memoryBytes: 300 * 1024 * 1024, maxProcesses: 64, cpus: 0.5 });
    expect(cg.rlimits(10_000).addressSpaceBytes).toBeUndefined();
    expect(cg.safeguards.every((g) => g.active)).toBe(true);
  });
});

describe('hard limits already in force', () => {
  it('are read from /proc and never exceeded, since prlimit would refuse to run the command', () => {
    // The layout of /proc/PID/limits (proc(5)), values as inside a sandbox with a CPU limit.
    const text = [
      'Limit                     Soft Limit           Hard Limit           Units     ',
      'Max cpu time              65                   65                   seconds   ',
      'Max file size             unlimited            unlimited            bytes     ',
      'Max processes             96365                96365                processes ',
      'Max address space         unlimited            unlimited            bytes     ',
    ].join('\n');
    expect(parseHardLimits(text)).toEqual({ cpuSeconds: 65, processes: 96365 });
    expect(
      clampLimits(
        { cpuSeconds: 125, addressSpaceBytes: undefined, fileSizeBytes: 4096, processes: 1024 },
        { cpuSeconds: 65, fileSizeBytes: 8192, processes: 100 },
      ),
    ).toEqual({ cpuSeconds: 65, addressSpaceBytes: undefined, fileSizeBytes: 4096, processes: 100 });
  });
});

describe.skipIf(unavailable !== null)(
  `limits under bubblewrap${unavailable ? ` - SKIPPED: ${unavailable}` : ''}`,
  () => {
    beforeAll(async () => {
      ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-limits-')));
      sandbox = await createBwrapSandbox({
        workspace: ws,
        network: false,
        envAllow: [],
        maxProcesses: 40,
        memoryMb: 128,
        tmpMb: 16,
      });
    });
    afterAll(async () => {
      await sandbox?.dispose();
      await rm(ws, { recursive: true, force: true });
    });

    it('reports which limits it enforces here', async () => {
      const support = await detectCgroups();
      expect(guard('memory').active).toBe(support.memory !== undefined);
      expect(guard('processes').active).toBe(support.pids !== undefined || process.getuid?.() !== 0);
      expect(guard('temp space')).toMatchObject({ active: true, detail: expect.stringMatching(/^16 MB/) });
    });

    it('stops a fork bomb at the process limit', async () => {
      if (!guard('processes').active) return;
      // 300 sleepers, each its own process, against a limit of 40. Perl, because bash retries a
      // failed fork for many seconds.
      const r = await run(
        "perl -e 'for (1..300) { my $p = fork(); if (!defined $p) { $f++; next } " +
          'if ($p == 0) { sleep 20; exit } $n++ } print "started=$n failed=$f\\n"\'',
      );
      const started = Number(/started=(\d+)/.exec(r.output)?.[1] ?? 'NaN');
      expect(started).toBeGreaterThan(0);
      expect(started).toBeLessThan(40);
      expect(r.output).toMatch(/failed=\d+/);
    });

    it('stops a process that takes more memory than allowed', async () => {
      // 400 MB in one string, against 128 MB.
      const r = await run(`perl -e '$x = "a" x 400_000_000; print "held ", length($x), "\\n"'`);
      expect(r.output).not.toMatch(/held 400000000/);
    });

    it('stops several processes that together take more memory than allowed', async () => {
      if (!guard('memory').active) return;
      // Four processes of 60 MB each: each under the cap, together far over it.
      const r = await run(
        `for i in 1 2 3 4; do perl -e '$x = "a" x 60_000_000; sleep 2; print "kept ", length($x), "\\n"' & done; wait`,
      );
      expect((r.output.match(/kept 60000000/g) ?? []).length).toBeLessThan(4);
    });

    it('keeps /tmp, /var/tmp and the home to their size', async () => {
      const r = await run(
        'for d in /tmp /var/tmp "$HOME"; do head -c 40000000 /dev/zero > "$d/fill"; echo "$d $(stat -c %s "$d/fill")"; done',
      );
      for (const line of r.output.split('\n').filter((l) => /^\S+ \d+$/.test(l))) {
        expect(Number(line.split(' ')[1])).toBeLessThanOrEqual(16 * 1024 * 1024);
      }
      expect(r.output).toMatch(/No space left on device/);
    });
  },
);
