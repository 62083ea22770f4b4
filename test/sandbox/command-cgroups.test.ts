/**
 * The per-command cgroups fail closed and do not pile up. A CI run once let a fork bomb through:
 * cgroups left by processes killed mid-command (646 of them on that machine) collided with the
 * names of a later process that reused a pid, creation failed, and the command ran without limits.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, rmdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandCgroups, detectCgroups, sweepDeadCgroups } from '../../src/sandbox/cgroup.js';
import { SandboxError } from '../../src/sandbox/types.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'hearth-cgroups-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('command cgroups', () => {
  it('refuse the command when a limit cannot be set, instead of running it without', async () => {
    const missing = path.join(dir, 'no-such-hierarchy');
    const made = CommandCgroups.create({ pids: { dir: missing, version: 1 } }, { maxProcesses: 5 });
    await expect(made).rejects.toThrow(SandboxError);
    await expect(made).rejects.toThrow(
      /Not running the command: its resource limits could not be set \(ENOENT/,
    );
  });

  it('need no cgroup when no limit applies', async () => {
    expect(await CommandCgroups.create({}, { maxProcesses: 5 })).toBeNull();
  });
});

const support = await detectCgroups();
const pids = support.pids;

describe.skipIf(pids === undefined)('left-over command cgroups (real cgroupfs)', () => {
  it('of dead processes are swept; ours and live ones stay; names never collide with leftovers', async () => {
    // A pid that was just alive and is now gone, as a killed Hearth's would be.
    const gone = spawnSync('true').pid!;
    const dead = path.join(pids!.dir, `hearth-${gone}-1`);
    const deadNew = path.join(pids!.dir, `hearth-${gone}-2-0a1b2c`);
    const ours = path.join(pids!.dir, `hearth-${process.pid}-999`);
    const other = path.join(pids!.dir, 'someone-else-1');
    for (const d of [dead, deadNew, ours, other]) await mkdir(d).catch(() => undefined);
    try {
      const cgroups = await CommandCgroups.create({ pids: pids! }, { maxProcesses: 7 });
      expect(cgroups).not.toBeNull();
      const [procs] = cgroups!.procsFiles();
      expect(path.basename(path.dirname(procs!))).toMatch(
        new RegExp(`^hearth-${process.pid}-\\d+-[0-9a-f]{6}$`),
      );

      expect(await sweepDeadCgroups({ pids: pids! })).toBeGreaterThanOrEqual(2);
      expect(existsSync(dead)).toBe(false);
      expect(existsSync(deadNew)).toBe(false);
      expect(existsSync(ours)).toBe(true);
      expect(existsSync(other)).toBe(true);
      expect(existsSync(path.dirname(procs!))).toBe(true);
      await cgroups!.remove();
      expect(existsSync(path.dirname(procs!))).toBe(false);
    } finally {
      for (const d of [dead, deadNew, ours, other]) await rmdir(d).catch(() => undefined);
    }
  });
});
