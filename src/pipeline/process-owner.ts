/**
 * Who holds a claimed task or a workspace, and whether a holder still runs, so that a worker
 * restarted on the same machine takes over from its dead predecessor at once instead of waiting
 * out its lease.
 *
 * An owner is `host:pid:random:process`. The random part tells two runs of one process apart, and
 * two machines that share a host name. `process` (Linux) says which process it is beyond doubt:
 * the kernel's boot id, the inode of its pid namespace, and its start time in clock ticks since
 * boot (field 22 of /proc/PID/stat). A host name and a pid alone do not: containers often share a
 * host name while each has its own pid 1, and a pid is reused once its process is gone.
 *
 * Another owner is judged dead only when it ran under this boot and in this pid namespace and no
 * process with its pid and start time exists now: then its pid means the same thing here, and a
 * pid now taken by a process that started at another time is someone else. (A namespace's inode
 * is reused only after every process in it ended, so a match with a dead namespace is a dead
 * owner all the same.) Any other owner (another machine, another container, a system without
 * /proc) is alive for this judgement, and its lease decides. An owner written without the process
 * part (by an older Hearth, or where /proc is missing) is judged as before: dead when it is of
 * this host and no process has its pid.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

export interface ProcessOwner {
  owner: string;
  alive(owner: string): boolean;
}

/** This process as a holder (a new random part each call), and the judge of other holders. */
export function processOwner(proc = '/proc'): ProcessOwner {
  const host = hostname();
  const here = thisProcess(proc);
  return {
    owner: `${host}:${process.pid}:${randomUUID().slice(0, 8)}${here ? `:${here.boot}.${here.ns}.${here.start}` : ''}`,
    alive(owner) {
      const [h, pid = '', , key] = owner.split(':');
      const [boot, ns, start] = key?.split('.') ?? [];
      if (here && boot && ns && start) {
        if (boot !== here.boot || ns !== here.ns) return true; // not ours to judge
        return /^\d+$/.test(pid) && startOf(proc, pid) === start;
      }
      if (h !== host) return true;
      return pidExists(Number(pid));
    },
  };
}

/** This boot, this pid namespace and this process's start; undefined where /proc cannot say. */
function thisProcess(proc: string): { boot: string; ns: string; start: string } | undefined {
  try {
    const boot = readFileSync(`${proc}/sys/kernel/random/boot_id`, 'utf8')
      .trim()
      .replace(/-/g, '')
      .slice(0, 12);
    const ns = /\[(\d+)\]/.exec(readlinkSync(`${proc}/self/ns/pid`))?.[1];
    const start = startOf(proc, 'self');
    return boot && ns && start ? { boot, ns, start } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * When process `pid` started, in clock ticks since boot; undefined when there is none, or only
 * its exit status waiting for its parent (a zombie holds nothing).
 */
function startOf(proc: string, pid: string): string | undefined {
  try {
    // The command name (field 2) may hold spaces and parentheses: count fields after the last `)`.
    const stat = readFileSync(`${proc}/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' || fields[0] === 'X' ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

function pidExists(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
