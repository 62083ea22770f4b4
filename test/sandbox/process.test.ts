import { readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findShell, KILL_GRACE_MS, runProcess } from '../../src/sandbox/process.js';
import { ManualClock } from '../support/manual-clock.js';
import { processName, processRunning } from '../support/processes.js';
import { waitUntil } from '../support/wait.js';

let dir: string;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-proc-')));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const run = (
  command: string,
  extra: { timeoutMs?: number; signal?: AbortSignal; maxOutputBytes?: number; clock?: ManualClock } = {},
) => runProcess({ command, cwd: dir, timeoutMs: extra.timeoutMs ?? 10_000, ...extra });

/**
 * Whether a pid is a live process. Zombies count as dead: an orphan is reparented to PID 1, which in
 * a container may never reap it, and a zombie holds no pipes and runs no code.
 */
function isAlive(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

async function expectDead(pids: number[]): Promise<void> {
  expect(pids.length).toBeGreaterThan(0);
  await waitUntil(() => !pids.some(isAlive), `processes ${pids.filter(isAlive)} to die`);
}

function pidsIn(output: string): number[] {
  return [...output.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
}

describe('runProcess', () => {
  it('returns output and exit code', async () => {
    const ok = await run('echo hello');
    expect(ok).toMatchObject({
      output: 'hello\n',
      exitCode: 0,
      signal: null,
      timedOut: false,
      aborted: false,
    });
    expect(ok.truncatedBytes).toBe(0);
    const failed = await run('echo oops >&2; exit 3');
    expect(failed).toMatchObject({ output: 'oops\n', exitCode: 3 });
  });

  it('interleaves stdout and stderr in arrival order', async () => {
    const r = await run('echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three');
    expect(r.output).toBe('one\ntwo\nthree\n');
  });

  it('runs in the given cwd with the given env and no stdin', async () => {
    const r = await runProcess({
      command: 'pwd; echo "$GREETING"; cat; echo "stdin done"',
      cwd: dir,
      env: { PATH: process.env.PATH, GREETING: 'hi there' },
      timeoutMs: 5000,
    });
    expect(r.output).toBe(`${dir}\nhi there\nstdin done\n`);
  });

  it('uses bash, and sh where there is no bash', async () => {
    expect(path.basename(findShell(process.env.PATH ?? ''))).toBe('bash');
    await symlink(findShell('/usr/bin:/bin').replace(/bash$/, 'sh'), path.join(dir, 'sh'));
    const r = await runProcess({
      command: 'echo "[$BASH_VERSION]"',
      cwd: dir,
      env: { PATH: dir },
      timeoutMs: 5000,
    });
    expect(r.output).toBe('[]\n');
  });

  it('kills the whole process tree on timeout and keeps the partial output', async () => {
    const clock = new ManualClock();
    const name = processName('timeout');
    const running = run(
      `echo before; sleep 30 & echo "pid=$!"; sleep 30 & echo "pid=$!"; exec -a ${name} sleep 30`,
      {
        timeoutMs: 500,
        clock,
      },
    );
    await processRunning(name);
    clock.advance(500);
    const r = await running;
    expect(r).toMatchObject({ timedOut: true, aborted: false, exitCode: null, signal: 'SIGTERM' });
    expect(r.output).toMatch(/^before\npid=\d+\npid=\d+\n$/);
    await expectDead(pidsIn(r.output));
  });

  it('escalates to SIGKILL after the grace period when the tree ignores SIGTERM', async () => {
    const clock = new ManualClock();
    let settled = false;
    const name = processName('stubborn');
    const running = run(`trap "" TERM; sleep 30 & echo "pid=$!"; exec -a ${name} sleep 30`, {
      timeoutMs: 300,
      clock,
    }).finally(() => {
      settled = true;
    });
    await processRunning(name);
    clock.advance(300);
    // SIGTERM went out; SIGKILL waits for the grace period, on the clock.
    expect(clock.pending).toContain(KILL_GRACE_MS);
    expect(settled).toBe(false);
    clock.advance(KILL_GRACE_MS);
    const r = await running;
    expect(r).toMatchObject({ timedOut: true, signal: 'SIGKILL' });
    await expectDead(pidsIn(r.output));
  });

  it('stops at once when aborted, with what was printed so far', async () => {
    const controller = new AbortController();
    const clock = new ManualClock();
    const name = processName('aborted');
    const running = run(`echo started; sleep 30 & echo "pid=$!"; exec -a ${name} sleep 30`, {
      signal: controller.signal,
      timeoutMs: 60_000,
      clock,
    });
    await processRunning(name);
    controller.abort();
    const r = await running;
    // SIGTERM was enough: nothing waited on the clock.
    expect(r).toMatchObject({ aborted: true, timedOut: false, signal: 'SIGTERM' });
    expect(r.output).toMatch(/^started\npid=\d+\n$/);
    await expectDead(pidsIn(r.output));
  });

  it('does not start at all when already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const r = await run('touch should-not-exist', { signal: controller.signal });
    expect(r).toMatchObject({ aborted: true, exitCode: null, output: '' });
    await expect(realpath(path.join(dir, 'should-not-exist'))).rejects.toThrow();
  });

  it('does not wait for background jobs, and kills them once the command exits', async () => {
    const clock = new ManualClock();
    const running = run('sleep 100 & echo "pid=$!"; echo done', { clock });
    // Once the command has exited, its job may hold the pipes for a short grace period only: a
    // second of clock time ends the call, not the job's hundred.
    await waitUntil(() => clock.pending.length === 2, 'the grace timer set when the command exits');
    clock.advance(1000);
    const r = await running;
    expect(r.exitCode).toBe(0);
    expect(r.output).toMatch(/^pid=\d+\ndone\n$/);
    await expectDead(pidsIn(r.output));
  });

  it('kills background jobs even when they do not hold the pipes', async () => {
    const r = await run('sleep 100 >/dev/null 2>&1 & echo "pid=$!"');
    expect(r.exitCode).toBe(0);
    await expectDead(pidsIn(r.output));
  });

  it('keeps head and tail within maxOutputBytes and counts what it dropped', async () => {
    const r = await run("echo START; head -c 3000000 /dev/zero | tr '\\0' x; echo; echo END", {
      maxOutputBytes: 100_000,
    });
    expect(r.exitCode).toBe(0);
    expect(r.output.startsWith('START\nxxx')).toBe(true);
    expect(r.output.endsWith('xxx\nEND\n')).toBe(true);
    const total = 'START\n'.length + 3_000_000 + '\nEND\n'.length;
    expect(r.truncatedBytes).toBe(total - 100_000);
    expect(r.output).toContain(`[... ${(total - 100_000).toLocaleString('en-US')} bytes of output cut ...]`);
    expect(r.output.length).toBeLessThan(100_200);
  });

  it('rejects when the process cannot be started', async () => {
    await expect(
      runProcess({ command: 'true', cwd: path.join(dir, 'missing'), timeoutMs: 1000 }),
    ).rejects.toThrow();
  });
});
