/**
 * Whether a process another Hearth process recorded is still running, for locks kept in a file
 * that only processes of one machine share (the SQLite run lease, src/store/sqlite-leases.ts).
 *
 * A pid alone is not an identity: once a process dies, the kernel hands its pid to a later one,
 * and a check by `kill(pid, 0)` would call a dead holder alive (a long wait, but safe) or, worse,
 * read another pid namespace's numbers (a container with the host's network, so the same host
 * name) as ours and call a live holder dead. So on Linux a process is recorded with what makes a
 * pid unique: the boot it runs in (/proc/sys/kernel/random/boot_id), its pid namespace
 * (/proc/self/ns/pid) and its start time (field 22 of /proc/PID/stat, clock ticks since boot). A
 * pid cannot be reused within one clock tick of the same boot, so the same pid with another start
 * time is another process: the recorded one is dead. That is how systemd and polkit tell processes
 * apart without pidfds. A record from another boot or namespace is not ours to judge.
 *
 * Elsewhere (macOS, BSD: no /proc) the record holds the pid only; a missing pid means a dead
 * holder, a present one counts as alive, so pid reuse there only delays a takeover to the expiry.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/** A process as recorded: its host and pid, and on Linux what tells it apart from a later one. */
export interface ProcessRecord {
  host: string;
  pid: number;
  /** `<boot id>/<pid namespace>/<start ticks>` on Linux; null where that cannot be read. */
  identity: string | null;
}

/** What a recorded process is now: running, gone, or not this machine's to tell. */
export type Liveness = 'alive' | 'dead' | 'unknown';

/** Reads the system; a port so a test can stand in for another machine or namespace. */
export interface ProcessTable {
  host(): string;
  /** `<boot id>/<pid namespace>` of this process, or null without /proc. */
  machine(): string | null;
  /** Start time of `pid` in clock ticks since boot; null when it does not run, undefined without /proc. */
  startTicks(pid: number): string | null | undefined;
  /** True when a process with this pid exists (the kernel's answer to signal 0). */
  exists(pid: number): boolean;
}

export const systemProcesses: ProcessTable = {
  host: () => hostname(),
  machine: () => {
    try {
      const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      return `${boot}/${readlinkSync('/proc/self/ns/pid')}`;
    } catch {
      return null;
    }
  },
  startTicks: (pid) => {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ENOENT' && procMounted() ? null : undefined;
    }
    // Fields after the command name (which may hold spaces and parentheses) start at field 3,
    // the state: a zombie (Z, or X while it is reaped) runs nothing any more.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return null;
    return fields[19];
  },
  exists: (pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  },
};

function procMounted(): boolean {
  try {
    readlinkSync('/proc/self/ns/pid');
    return true;
  } catch {
    return false;
  }
}

/** This process as others should record it. */
export function thisProcess(table: ProcessTable = systemProcesses): ProcessRecord {
  const machine = table.machine();
  const ticks = machine === null ? undefined : table.startTicks(process.pid);
  return {
    host: table.host(),
    pid: process.pid,
    identity: machine !== null && ticks ? `${machine}/${ticks}` : null,
  };
}

/** Whether the recorded process still runs, as far as this process can tell. */
export function liveness(record: ProcessRecord, table: ProcessTable = systemProcesses): Liveness {
  if (record.host !== table.host()) return 'unknown';
  const machine = table.machine();
  if (record.identity === null || machine === null) {
    // Without /proc on both sides nothing tells namespaces apart: only this platform's own
    // process table (no /proc at all here, so no Linux namespaces either) is read.
    if (record.identity !== null || machine !== null) return 'unknown';
    return table.exists(record.pid) ? 'alive' : 'dead';
  }
  const cut = record.identity.lastIndexOf('/');
  if (record.identity.slice(0, cut) !== machine) return 'unknown';
  const ticks = table.startTicks(record.pid);
  if (ticks === undefined) return 'unknown';
  return ticks === record.identity.slice(cut + 1) ? 'alive' : 'dead';
}
