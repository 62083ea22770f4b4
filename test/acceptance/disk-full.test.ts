import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

/**
 * A full disk, made for real: the Hearth home is a small tmpfs, filled up to a few kilobytes.
 * Mounting needs root (CI runs as root); elsewhere the tests say they are skipped.
 */
function tryMount(dir: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const probe = mkdtempSync(join(tmpdir(), 'hearth-mount-probe-'));
const canMount = tryMount(probe);
if (canMount) execFileSync('umount', [probe]);
rmSync(probe, { recursive: true, force: true });
if (!canMount) console.warn('disk-full tests skipped: mounting a tmpfs needs root');

/** Fills the disk holding `dir` until `leave` bytes are left. */
function fillUntil(dir: string, leave: number): string {
  const { bavail, bsize } = statfsSync(dir);
  const filler = join(dir, 'filler');
  writeFileSync(filler, Buffer.alloc(Math.max(0, bavail * bsize - leave)));
  return filler;
}

describe.skipIf(!canMount)('a full disk while saving, through the installed hearth', () => {
  const cli = useCliHarness('acc-disk-full');
  let home: string;

  function mountHome(): string {
    home = join(cli.workspace, '..', `full-home-${Date.now()}`);
    mkdirSync(home);
    if (!tryMount(home)) throw new Error('mounting a tmpfs failed after it had worked');
    return home;
  }

  afterEach(() => {
    if (home) execFileSync('umount', [home]);
  });

  it('a one-shot run says the disk is full, where, and how to go on; the session resumes once there is room', async () => {
    await cli.serve([
      reply().text('Small.'),
      reply().text('y'.repeat(200_000)).chunkSize(8192),
      reply().text('Back again.'),
    ]);
    const env = { HEARTH_HOME: mountHome(), HEARTH_CONTEXT_WINDOW: '131072' };
    const first = await cli.run(['remember the word heron'], { env });
    expect(first.code).toBe(0);
    const id = /session (\w+) ·/.exec(first.stderr)?.[1];
    expect(id).toBeDefined();

    const filler = fillUntil(home, 48 * 1024);
    const full = await cli.run(['--resume', id!, 'write a long answer'], { env });
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(
      new RegExp(`The disk is full: Hearth could not save to ${home}/hearth\\.db \\([^)]* free there\\)`),
    );
    expect(full.stderr).toContain(`Nothing saved before was lost`);
    expect(full.stderr).toContain(`continue with: hearth --resume ${id}`);
    expect(full.stderr).not.toMatch(/SqliteError|unexpected error|\n\s+at /);

    rmSync(filler);
    const again = await cli.run(['--resume', id!, 'say it again'], { env });
    // Where the disk ran out (before the request, or while its long answer was stored) decides
    // which answer the server gives now; what matters is that the session goes on, whole.
    expect(again.code).toBe(0);
    const sent = JSON.stringify(cli.server.requests.at(-1)?.body);
    expect(sent).toContain('remember the word heron');
    expect(sent).toContain('say it again');
  });

  it('a run that cannot even open its database on a full disk says so, not a disk I/O error', async () => {
    await cli.serve([reply().text('Small.'), reply().text('Never.')]);
    const env = { HEARTH_HOME: mountHome() };
    expect((await cli.run(['hello'], { env })).code).toBe(0);
    fillUntil(home, 0);
    const r = await cli.run(['hello again'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /The disk is full: Hearth could not save to .*hearth\.db \(0 bytes free there\)/,
    );
    expect(r.stderr).not.toMatch(/SqliteError|unexpected error|\n\s+at /);
  });
});
