/**
 * Whether a process another Hearth process recorded is still running: the one judge of it, for
 * the SQLite run lease (src/store/sqlite-leases.ts: a row names its holder's process) and for the
 * pipeline's claims and workspace holds (`processOwner`: an owner string names it), so that a
 * holder of this machine that died is taken over at once instead of after its lease.
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
import { randomUUID } from 'node:crypto';
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
  startTicks(pid: number | 'self'): string | null | undefined;
  /** True when a process with this pid exists (the kernel's answer to signal 0). */
  exists(pid: number): boolean;
}

/** The process table read from a /proc mounted at `root` (a test lays one out in a folder). */
export function procTable(root = '/proc'): ProcessTable {
  const procMounted = () => {
    try {
      readlinkSync(`${root}/self/ns/pid`);
      return true;
    } catch {
      return false;
    }
  };
  return {
    host: () => hostname(),
    machine: () => {
      try {
        const boot = readFileSync(`${root}/sys/kernel/random/boot_id`, 'utf8').trim();
        return `${boot}/${readlinkSync(`${root}/self/ns/pid`)}`;
      } catch {
        return null;
      }
    },
    startTicks: (pid) => {
      let stat: string;
      try {
        stat = readFileSync(`${root}/${pid}/stat`, 'utf8');
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
      if (!Number.isInteger(pid) || pid <= 0) return false;
      try {
        process.kill(pid, 0);
        return true;
      } catch (err) {
        return (err as NodeJS.ErrnoException).code === 'EPERM';
      }
    },
  };
}

export const systemProcesses: ProcessTable = procTable();

/** This process as others should record it. */
export function thisProcess(table: ProcessTable = systemProcesses): ProcessRecord {
  const machine = table.machine();
  const ticks = machine === null ? undefined : table.startTicks('self');
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
  if (machineKey(record.identity.slice(0, cut)) !== machineKey(machine)) return 'unknown';
  const ticks = table.startTicks(record.pid);
  if (ticks === undefined) return 'unknown';
  return ticks === record.identity.slice(cut + 1) ? 'alive' : 'dead';
}

/**
 * A boot and pid namespace as an owner string carries them: the boot id's first 12 hex digits
 * and the namespace's inode (`0123abcd4567.4026531836`); a key in that form already stays as is.
 */
function machineKey(machine: string): string {
  const full = /^([0-9a-f-]+)\/pid:\[(\d+)\]$/.exec(machine);
  return full ? `${full[1]!.replace(/-/g, '').slice(0, 12)}.${full[2]}` : machine;
}

/** A holder of the pipeline's claims and workspace holds, and the judge of other holders. */
export interface ProcessOwner {
  owner: string;
  alive(owner: string): boolean;
}

/**
 * This process as a holder (a new random part each call): `host:pid:random:process`, where the
 * random part tells two runs of one process apart, and two machines that share a host name, and
 * `process` (Linux) is `<boot key>.<start ticks>` (see `machineKey`). An owner is alive unless
 * `liveness` finds it dead: one this machine cannot judge keeps what it holds until its lease
 * decides. An owner written without the process part (by an older Hearth, or where /proc is
 * missing) is judged by its host and pid alone, as it was: dead when it is of this host and no
 * process has its pid (a store without leases has nothing else to free its tasks by).
 */
export function processOwner(table: ProcessTable = systemProcesses): ProcessOwner {
  const me = thisProcess(table);
  const cut = me.identity?.lastIndexOf('/') ?? -1;
  const key = me.identity ? `:${machineKey(me.identity.slice(0, cut))}.${me.identity.slice(cut + 1)}` : '';
  return {
    owner: `${me.host}:${me.pid}:${randomUUID().slice(0, 8)}${key}`,
    alive(owner) {
      const [host = '', pid = '', , key] = owner.split(':');
      if (!key) return host !== table.host() || table.exists(Number(pid));
      const dot = key.lastIndexOf('.');
      const identity = `${key.slice(0, dot)}/${key.slice(dot + 1)}`;
      return liveness({ host, pid: Number(pid), identity }, table) !== 'dead';
    },
  };
}
