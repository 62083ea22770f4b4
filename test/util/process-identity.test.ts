/**
 * Whether a holder still runs, as a pipeline worker of this machine judges its owner string
 * (src/util/process-identity.ts, the judge the SQLite run lease uses too: test/store/run-lease.test.ts): by boot, pid namespace, pid
 * and start time, on the real /proc (this process, a child that exited) and on a /proc laid out
 * in a folder for what a test cannot stage for real (a pid reused, a zombie, another boot or
 * namespace). An owner it cannot judge is alive: its lease decides.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processOwner, procTable } from '../../src/util/process-identity.js';

const linux = process.platform === 'linux';

describe('a holder judged by its process', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** A /proc with this boot, namespace 4026531836 and the processes `stats` (pid → stat line). */
  function fakeProc(stats: Record<string, string>): string {
    const proc = mkdtempSync(join(tmpdir(), 'hearth-proc-'));
    dirs.push(proc);
    mkdirSync(join(proc, 'sys/kernel/random'), { recursive: true });
    writeFileSync(join(proc, 'sys/kernel/random/boot_id'), '0123abcd-4567-89ef-0123-456789abcdef\n');
    mkdirSync(join(proc, 'self/ns'), { recursive: true });
    symlinkSync('pid:[4026531836]', join(proc, 'self/ns/pid'));
    for (const [pid, stat] of Object.entries(stats)) {
      mkdirSync(join(proc, pid), { recursive: true });
      writeFileSync(join(proc, pid, 'stat'), stat);
    }
    return proc;
  }
  /** A stat line (a command name with a space and a parenthesis) in `state`, started at `start`. */
  const stat = (pid: number, state: string, start: number) =>
    `${pid} (node (x) y) ${state} ${Array.from({ length: 18 }, (_, i) => i + 1).join(' ')} ${start} 0 0\n`;

  it.skipIf(!linux)('finds this process alive and a child that exited dead, on the real /proc', () => {
    const me = processOwner();
    expect(me.owner).toMatch(
      new RegExp(`^${hostname()}:${process.pid}:[0-9a-f]{8}:[0-9a-f]{12}\\.\\d+\\.\\d+$`),
    );
    expect(me.alive(me.owner)).toBe(true);
    expect(me.alive(processOwner().owner)).toBe(true);
    const child = spawnSync(process.execPath, ['-e', '0']);
    expect(child.status).toBe(0);
    const [, , , key] = me.owner.split(':');
    const [boot, ns] = key!.split('.');
    expect(me.alive(`${hostname()}:${child.pid}:00000000:${boot}.${ns}.1`)).toBe(false);
  });

  it('tells a reused pid and a zombie from the holder, and leaves other boots and namespaces alone', () => {
    const proc = fakeProc({
      self: stat(process.pid, 'S', 500),
      41: stat(41, 'S', 900),
      42: stat(42, 'Z', 700),
    });
    const judge = processOwner(procTable(proc));
    const here = '0123abcd4567.4026531836';
    // An owner of this host: one of another host is not this machine's to judge.
    const h = hostname();
    expect(judge.owner.endsWith(`:${here}.500`)).toBe(true);
    expect(judge.alive(`${h}:41:aaaaaaaa:${here}.900`)).toBe(true);
    // Pid 41 now is a process that started at another time: the holder is gone.
    expect(judge.alive(`${h}:41:aaaaaaaa:${here}.300`)).toBe(false);
    expect(judge.alive(`${h}:42:aaaaaaaa:${here}.700`)).toBe(false);
    expect(judge.alive(`${h}:43:aaaaaaaa:${here}.700`)).toBe(false);
    // Another boot, another pid namespace (another container with the same host name): not ours.
    expect(judge.alive(`${h}:43:aaaaaaaa:ffffffffffff.4026531836.700`)).toBe(true);
    expect(judge.alive(`${h}:43:aaaaaaaa:0123abcd4567.4026532999.700`)).toBe(true);
  });

  it('judges an owner without the process part by host and pid, as before', () => {
    const judge = processOwner(procTable(fakeProc({})));
    expect(judge.owner.split(':')).toHaveLength(3);
    expect(judge.alive(`${hostname()}:${process.pid}:aaaaaaaa`)).toBe(true);
    expect(judge.alive('elsewhere:1:aaaaaaaa')).toBe(true);
    const child = spawnSync(process.execPath, ['-e', '0']);
    expect(judge.alive(`${hostname()}:${child.pid}:aaaaaaaa`)).toBe(false);
  });
});
