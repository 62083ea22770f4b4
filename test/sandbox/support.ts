import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createBwrapSandbox } from '../../src/sandbox/bwrap.js';
import { waitUntil } from '../support/wait.js';

/**
 * Why the real bwrap backend cannot run on this machine, or null when it can. Tests that need it skip
 * with this reason in their name, so a skipped battery is visible in the report rather than silent.
 */
export async function bwrapUnavailable(): Promise<string | null> {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-bwrap-probe-')));
  try {
    const sandbox = await createBwrapSandbox({ workspace: dir, network: false, envAllow: [] });
    await sandbox.dispose();
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Live host processes whose command line contains `marker` (or, with `asName`, whose program name
 * is exactly `marker`, as `exec -a` sets it: the shells and bwrap that launch it do not count then).
 * Zombies do not count: they run nothing, and an orphan reparented to a PID 1 that never reaps stays
 * one forever.
 */
export function hostProcessesWith(marker: string, asName = false): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (asName ? cmdline.split('\0')[0] !== marker : !cmdline.includes(marker)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && state !== 'X') found.push(Number(entry));
    } catch {
      // Exited while we looked.
    }
  }
  return found;
}

/**
 * Waits for every process carrying `marker` to be gone, then returns the survivors (ideally none).
 * Returns as soon as none is left; the wait only runs out when something survived.
 */
export async function survivorsAfter(marker: string, waitMs = 10_000): Promise<number[]> {
  await waitUntil(
    () => hostProcessesWith(marker).length === 0,
    `processes named ${marker} to end`,
    waitMs,
  ).catch(() => {});
  return hostProcessesWith(marker);
}

export function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}
