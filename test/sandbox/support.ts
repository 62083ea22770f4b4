import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createBwrapSandbox } from '../../src/sandbox/bwrap.js';
import { hostProcessesWith } from '../support/processes.js';
import { waitUntil } from '../support/wait.js';

export { hostProcessesWith };

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
