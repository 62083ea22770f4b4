import { randomBytes } from 'node:crypto';
import { access, constants, mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { shellJoin, shellQuote } from './host-command.js';
import { SandboxError } from './types.js';

/**
 * Per-command control groups for limits rlimits cannot give: the memory of a whole process tree
 * (RLIMIT_AS is per process and counts reservations, not use), a process count that also binds root
 * (RLIMIT_NPROC is never enforced for uid 0), and CPU share. A cgroup also holds every process of
 * the command, so removing it kills exactly those, setsid or not.
 *
 * Only a cgroup Hearth may create children in is used, found by trying: under cgroup v2, the
 * process's own cgroup when it hands the controllers down to its children (cgroup.subtree_control),
 * or can be made to (a writable cgroup without processes of its own, such as a container's root
 * cgroup; an unprivileged process in a terminal's cgroup usually cannot); under cgroup v1, the
 * process's own cgroup in each controller's hierarchy when it is writable (root, or a delegated
 * container). systemd's transient scopes are the other way in (systemd-scope.ts);
 * command-group.ts picks between them.
 */

export type Controller = 'memory' | 'pids' | 'cpu';

interface Hierarchy {
  /** The directory of this process's own cgroup in that hierarchy. */
  dir: string;
  version: 1 | 2;
}

/** Where each controller can be used, for children of this process's cgroups. */
export type CgroupSupport = Partial<Record<Controller, Hierarchy>>;

const CONTROLLERS: readonly Controller[] = ['memory', 'pids', 'cpu'];

/** The file that proves a child cgroup gets the controller, per cgroup version. */
const LIMIT_FILE: Record<Controller, Record<1 | 2, string>> = {
  memory: { 1: 'memory.limit_in_bytes', 2: 'memory.max' },
  pids: { 1: 'pids.max', 2: 'pids.max' },
  cpu: { 1: 'cpu.cfs_quota_us', 2: 'cpu.max' },
};

interface Mount {
  /** Root of the mount within the hierarchy (field 4 of mountinfo). */
  root: string;
  point: string;
  version: 1 | 2;
  /** v1: the controllers of this hierarchy. */
  controllers: string[];
}

async function cgroupMounts(): Promise<Mount[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  const mounts: Mount[] = [];
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const fields = left.split(' ');
    const [fsType, , superOptions = ''] = right.split(' ');
    const root = unescapeMount(fields[3] ?? '');
    const point = unescapeMount(fields[4] ?? '');
    if (fsType === 'cgroup2') mounts.push({ root, point, version: 2, controllers: [] });
    else if (fsType === 'cgroup')
      mounts.push({ root, point, version: 1, controllers: superOptions.split(',') });
  }
  return mounts;
}

/** mountinfo writes spaces, tabs, newlines and backslashes in octal. */
function unescapeMount(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, code: string) => String.fromCharCode(Number.parseInt(code, 8)));
}

/** A process's cgroup path per hierarchy: key `0` for v2, else the v1 controller list. */
async function ownCgroups(pid: number | 'self' = 'self'): Promise<Map<string, string>> {
  const text = await readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => '');
  const own = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (m) own.set(m[2] === '' ? '0' : m[2]!, m[3]!);
  }
  return own;
}

function dirFor(mount: Mount, own: string): string | null {
  const rel = path.posix.relative(mount.root, own);
  if (rel.startsWith('..')) return null;
  return path.join(mount.point, rel);
}

/** Finds, per controller, a hierarchy where a child cgroup of ours gets that controller. */
export async function detectCgroups(): Promise<CgroupSupport> {
  if (process.platform !== 'linux') return {};
  const [mounts, own] = await Promise.all([cgroupMounts(), ownCgroups()]);
  const support: CgroupSupport = {};
  const v2Mount = mounts.find((m) => m.version === 2);
  const v2Own = own.get('0');
  if (v2Mount && v2Own !== undefined) {
    const dir = dirFor(v2Mount, v2Own);
    const handed = dir ? await handDown(dir) : [];
    for (const c of CONTROLLERS) {
      if (dir && handed.includes(c) && (await usable(dir, c, 2))) support[c] = { dir, version: 2 };
    }
  }
  for (const c of CONTROLLERS) {
    if (support[c]) continue;
    const mount = mounts.find((m) => m.version === 1 && m.controllers.includes(c));
    const ownPath = [...own].find(([names]) => names.split(',').includes(c))?.[1];
    const dir = mount && ownPath !== undefined ? dirFor(mount, ownPath) : null;
    if (dir && (await usable(dir, c, 1))) support[c] = { dir, version: 1 };
  }
  return support;
}

/**
 * The controllers a v2 cgroup hands to its children, enabling those it has but does not hand down
 * yet where the kernel lets us: only a cgroup with no process of its own may (the root one may
 * always), so in a terminal's or a service's cgroup the write fails and nothing changes.
 */
async function handDown(dir: string): Promise<string[]> {
  const read = async (file: string) =>
    (await readFile(path.join(dir, file), 'utf8').catch(() => '')).split(/\s+/).filter((c) => c !== '');
  const handed = await read('cgroup.subtree_control');
  const available = await read('cgroup.controllers');
  const missing = CONTROLLERS.filter((c) => available.includes(c) && !handed.includes(c));
  for (const c of missing) {
    await writeFile(path.join(dir, 'cgroup.subtree_control'), `+${c}`).then(
      () => handed.push(c),
      () => undefined,
    );
  }
  return handed;
}

/**
 * The directory of a process's cgroup for `controller` (v2 when it is there, else v1), for
 * reading what a cgroup made by someone else (a systemd scope) enforces.
 */
export async function cgroupDirOf(pid: number, controller: Controller): Promise<string | null> {
  const [mounts, own] = await Promise.all([cgroupMounts(), ownCgroups(pid)]);
  const v1 = mounts.find((m) => m.version === 1 && m.controllers.includes(controller));
  const v1Own = [...own].find(([names]) => names.split(',').includes(controller))?.[1];
  if (v1 && v1Own !== undefined) return dirFor(v1, v1Own);
  const v2 = mounts.find((m) => m.version === 2);
  const v2Own = own.get('0');
  return v2 && v2Own !== undefined ? dirFor(v2, v2Own) : null;
}

/** Tries a child cgroup: it must be creatable and carry the controller's limit file. */
async function usable(dir: string, controller: Controller, version: 1 | 2): Promise<boolean> {
  const probe = path.join(dir, `hearth-probe-${process.pid}-${randomBytes(3).toString('hex')}`);
  try {
    await access(dir, constants.W_OK);
    await mkdir(probe);
  } catch {
    return false;
  }
  try {
    await access(path.join(probe, LIMIT_FILE[controller][version]), constants.W_OK);
    return true;
  } catch {
    return false;
  } finally {
    await rmdir(probe).catch(() => undefined);
  }
}

export interface CgroupLimits {
  memoryBytes?: number;
  maxProcesses?: number;
  cpus?: number;
}

const CPU_PERIOD_US = 100_000;
let sequence = 0;
const COMMAND_CGROUP = /^hearth-(\d+)-\d+(?:-[0-9a-f]+)?$/;

/**
 * Removes the command cgroups of Hearth processes that are gone: one killed mid-command never
 * removed its own, and they pile up. rmdir only removes a cgroup with no process left in it, so a
 * command still running (of any process) is never touched.
 */
export async function sweepDeadCgroups(support: CgroupSupport): Promise<number> {
  const dirs = new Set(CONTROLLERS.map((c) => support[c]?.dir).filter((d): d is string => d !== undefined));
  let removed = 0;
  for (const dir of dirs) {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const m = COMMAND_CGROUP.exec(name);
      const pid = Number(m?.[1]);
      if (!m || pid === process.pid || alive(pid)) continue;
      if (
        await rmdir(path.join(dir, name)).then(
          () => true,
          () => false,
        )
      )
        removed++;
    }
  }
  return removed;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The cgroups of one command: created before it starts, joined by its wrapper, removed after. */
export class CommandCgroups {
  private constructor(
    private readonly dirs: Array<{ dir: string; version: 1 | 2 }>,
    private readonly pidsDir?: string,
  ) {}

  /**
   * Creates the cgroups and writes the limits; null when no limit applies. A failure throws: the
   * sandbox reported these limits as enforced, and a command run without them would not be.
   */
  static async create(support: CgroupSupport, limits: CgroupLimits): Promise<CommandCgroups | null> {
    const wanted: Array<[Controller, Array<[string, string]>]> = [];
    if (limits.memoryBytes !== undefined && support.memory) {
      const bytes = String(limits.memoryBytes);
      wanted.push([
        'memory',
        support.memory.version === 2
          ? [
              ['memory.max', bytes],
              ['memory.swap.max', '0'],
            ]
          : [
              ['memory.limit_in_bytes', bytes],
              ['memory.memsw.limit_in_bytes', bytes],
            ],
      ]);
    }
    if (limits.maxProcesses !== undefined && support.pids) {
      wanted.push(['pids', [['pids.max', String(limits.maxProcesses)]]]);
    }
    if (limits.cpus !== undefined && support.cpu) {
      const quota = String(Math.max(1000, Math.round(limits.cpus * CPU_PERIOD_US)));
      wanted.push([
        'cpu',
        support.cpu.version === 2
          ? [['cpu.max', `${quota} ${CPU_PERIOD_US}`]]
          : [
              ['cpu.cfs_period_us', String(CPU_PERIOD_US)],
              ['cpu.cfs_quota_us', quota],
            ],
      ]);
    }
    if (wanted.length === 0) return null;
    // The random part: a process that reuses the pid of one killed mid-command must not collide
    // with the cgroup that one left behind.
    const name = `hearth-${process.pid}-${++sequence}-${randomBytes(3).toString('hex')}`;
    const made = new Map<string, 1 | 2>();
    try {
      for (const [controller, files] of wanted) {
        const hierarchy = support[controller]!;
        const dir = path.join(hierarchy.dir, name);
        if (!made.has(dir)) {
          await mkdir(dir);
          made.set(dir, hierarchy.version);
        }
        for (const [file, value] of files) {
          // Swap limits exist only with swap accounting on; the memory limit alone still holds.
          const optional = file.includes('swap') || file.includes('memsw');
          await writeFile(path.join(dir, file), value).catch((err: unknown) => {
            if (!optional) throw err;
          });
        }
      }
    } catch (err) {
      await new CommandCgroups([...made].map(([dir, version]) => ({ dir, version }))).remove();
      const why = err instanceof Error ? err.message : String(err);
      throw new SandboxError(
        `Not running the command: its resource limits could not be set (${why}). ` +
          'Try again; if it persists, `hearth doctor` checks the sandbox.',
      );
    }
    return new CommandCgroups(
      [...made].map(([dir, version]) => ({ dir, version })),
      wanted.some(([c]) => c === 'pids') ? path.join(support.pids!.dir, name) : undefined,
    );
  }

  /** How many times the process limit refused a fork (pids.events), so the model can be told. */
  async refusedForks(): Promise<number> {
    if (this.pidsDir === undefined) return 0;
    const events = await readFile(path.join(this.pidsDir, 'pids.events'), 'utf8').catch(() => '');
    return Number(/^max (\d+)/m.exec(events)?.[1] ?? 0);
  }

  /** Files the wrapper writes its own pid into before it execs the sandbox. */
  procsFiles(): string[] {
    return this.dirs.map((d) => path.join(d.dir, 'cgroup.procs'));
  }

  /**
   * A shell line that moves the wrapper shell into the cgroups, then execs `argv`: everything it
   * starts is counted from its first instruction. Not joined: the command does not run (exit 125).
   */
  wrap(argv: readonly string[]): string {
    const join = this.procsFiles()
      .map(
        (file) =>
          `{ echo $$ > ${shellQuote(file)}; } 2>/dev/null || { echo "hearth: cannot join the cgroup ${file}" >&2; exit 125; }; `,
      )
      .join('');
    return `${join}exec ${shellJoin(argv)}`;
  }

  /** Kills whatever is left in the cgroups, then removes them (retrying while the kernel lets go). */
  async remove(): Promise<void> {
    for (const { dir, version } of this.dirs) {
      if (version === 2) await writeFile(path.join(dir, 'cgroup.kill'), '1').catch(() => undefined);
      const procs = await readFile(path.join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
      for (const pid of procs.split('\n').filter((p) => p !== '')) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
      for (let attempt = 0; attempt < 20; attempt++) {
        const code = await rmdir(dir).then(
          () => 'removed',
          (err: NodeJS.ErrnoException) => err.code,
        );
        if (code === 'removed' || code === 'ENOENT') break;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
}
