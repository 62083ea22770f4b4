import { readFile } from 'node:fs/promises';
import type { CgroupLimits, Controller } from './cgroup.js';
import type { Safeguard } from './types.js';

/**
 * Resource limits for commands, from what the system offers: rlimits (through prlimit, else the
 * shell's ulimit) for what binds one process, control groups (command-group.ts) for what binds a tree, and
 * a size on every tmpfs. Each setting is either enforced or reported as not enforced, with why.
 */

const MB = 1024 * 1024;

/** Total memory of a command's processes, where a cgroup can hold it. */
const DEFAULT_MEMORY_MB = 2048;
/**
 * Address space per process, where no cgroup can limit the total. Generous on purpose: it counts
 * reservations, not use; Node's WebAssembly (which its fetch() uses) reserves about 10 GB and fails
 * below that, and Java and Go reserve gigabytes just to start.
 */
export const DEFAULT_ADDRESS_SPACE_MB = 16_384;
export const DEFAULT_MAX_PROCESSES = 512;
export const DEFAULT_TMP_MB = 512;
const DEFAULT_FILE_SIZE_MB = 4096;
/** CPU time beyond the wall-clock timeout, so that the timeout stays the limit that normally fires. */
const CPU_SLACK_S = 5;

export interface ResourceLimits {
  cpuSeconds: number;
  /** Virtual address space per process; unset when a cgroup limits the memory instead. */
  addressSpaceBytes?: number;
  fileSizeBytes: number;
  /** RLIMIT_NPROC. Only meaningful inside a user namespace: outside it counts all the user's tasks. */
  processes?: number;
}

export function limitsFor(timeoutMs: number, memoryMb?: number): ResourceLimits {
  return {
    cpuSeconds: Math.ceil(timeoutMs / 1000) + CPU_SLACK_S,
    addressSpaceBytes: (memoryMb ?? DEFAULT_ADDRESS_SPACE_MB) * MB,
    fileSizeBytes: DEFAULT_FILE_SIZE_MB * MB,
  };
}

const LIMIT_NAMES: Record<keyof ResourceLimits, string> = {
  cpuSeconds: 'Max cpu time',
  addressSpaceBytes: 'Max address space',
  fileSizeBytes: 'Max file size',
  processes: 'Max processes',
};

/**
 * The hard limits this process runs under (Linux, /proc/self/limits): a command cannot be given more,
 * and prlimit refuses to run it at all when asked to raise one (as inside another sandbox).
 */
export async function hostHardLimits(): Promise<Partial<ResourceLimits>> {
  return parseHardLimits(await readFile('/proc/self/limits', 'utf8').catch(() => ''));
}

/** The hard column of /proc/PID/limits for the limits Hearth sets; `unlimited` ones are left out. */
export function parseHardLimits(text: string): Partial<ResourceLimits> {
  const hard: Partial<ResourceLimits> = {};
  for (const [key, name] of Object.entries(LIMIT_NAMES) as Array<[keyof ResourceLimits, string]>) {
    const line = text.split('\n').find((l) => l.startsWith(name));
    const value = line?.slice(name.length).trim().split(/\s+/)[1];
    if (value !== undefined && /^\d+$/.test(value)) hard[key] = Number(value);
  }
  return hard;
}

/** Each limit no higher than the hard limit already in force. */
export function clampLimits(limits: ResourceLimits, hard: Partial<ResourceLimits>): ResourceLimits {
  const clamp = (value: number | undefined, ceiling: number | undefined) =>
    value === undefined || ceiling === undefined ? value : Math.min(value, ceiling);
  return {
    cpuSeconds: clamp(limits.cpuSeconds, hard.cpuSeconds)!,
    addressSpaceBytes: clamp(limits.addressSpaceBytes, hard.addressSpaceBytes),
    fileSizeBytes: clamp(limits.fileSizeBytes, hard.fileSizeBytes)!,
    processes: clamp(limits.processes, hard.processes),
  };
}

/**
 * A program and its arguments with the limits applied: through prlimit when present (it sets hard
 * limits the command cannot raise again), else through sh's ulimit, each limit on its own so that
 * one a platform lacks (macOS has no -v) does not cancel the others. sh's ulimit counts -v in KiB
 * and -f in 512-byte blocks (POSIX; bash as sh too).
 */
export function limitedArgv(
  argv: readonly string[],
  limits: ResourceLimits,
  prlimit: string | null,
): string[] {
  if (prlimit !== null) {
    const flags = [`--cpu=${limits.cpuSeconds}`];
    if (limits.addressSpaceBytes !== undefined) flags.push(`--as=${limits.addressSpaceBytes}`);
    flags.push(`--fsize=${limits.fileSizeBytes}`);
    if (limits.processes !== undefined) flags.push(`--nproc=${limits.processes}`);
    return [prlimit, ...flags, '--', ...argv];
  }
  const steps = [`ulimit -t ${limits.cpuSeconds} 2>/dev/null`];
  if (limits.addressSpaceBytes !== undefined)
    steps.push(`ulimit -v ${Math.floor(limits.addressSpaceBytes / 1024)} 2>/dev/null`);
  steps.push(`ulimit -f ${Math.floor(limits.fileSizeBytes / 512)} 2>/dev/null`);
  if (limits.processes !== undefined) steps.push(`ulimit -u ${limits.processes} 2>/dev/null`);
  return ['/bin/sh', '-c', `${steps.join('; ')}; exec "$@"`, 'sh', ...argv];
}

export interface LimitSettings {
  memoryMb?: number;
  cpus?: number;
  maxProcesses?: number;
  tmpMb?: number;
}

/** How a sandbox inside a user namespace limits each command (bubblewrap). */
export interface LimitPlan {
  /** Per call, from its timeout. */
  rlimits(timeoutMs: number): ResourceLimits;
  cgroup: CgroupLimits;
  tmpBytes: number | undefined;
  safeguards: Safeguard[];
}

/**
 * Decides, once per sandbox, which mechanism carries each limit and says so. `heldBy`: what holds
 * each controller for a command's group (command-group.ts). `root`: processes of uid 0 are exempt
 * from RLIMIT_NPROC, so only a cgroup can count them.
 */
export function planLimits(
  settings: LimitSettings,
  heldBy: Partial<Record<Controller, string>>,
  opts: { root: boolean; tmpfsSize: boolean; hard?: Partial<ResourceLimits> },
): LimitPlan {
  const safeguards: Safeguard[] = [];
  const cgroup: CgroupLimits = {};

  const memoryMb = settings.memoryMb ?? DEFAULT_MEMORY_MB;
  let addressSpaceMb: number | undefined;
  if (heldBy.memory) {
    cgroup.memoryBytes = memoryMb * MB;
    safeguards.push(on('memory', `${memoryMb} MB for all of a command's processes (${heldBy.memory})`));
  } else {
    addressSpaceMb = settings.memoryMb ?? DEFAULT_ADDRESS_SPACE_MB;
    safeguards.push({
      name: 'memory',
      active: false,
      detail:
        `no total limit (no writable cgroup with the memory controller); each process may reserve ` +
        `${addressSpaceMb} MB of address space${settings.memoryMb !== undefined && settings.memoryMb < DEFAULT_ADDRESS_SPACE_MB ? " (below ~10 GB Node's WebAssembly and fetch() fail)" : ''}`,
    });
  }

  const processes = settings.maxProcesses ?? DEFAULT_MAX_PROCESSES;
  if (heldBy.pids) {
    cgroup.maxProcesses = processes;
    safeguards.push(
      on('processes', `${processes} at once per command (sandbox.max_processes; ${heldBy.pids} pids)`),
    );
  } else if (!opts.root) {
    safeguards.push(
      on(
        'processes',
        `${processes} (sandbox.max_processes; RLIMIT_NPROC, which counts all of your processes, not only the command's)`,
      ),
    );
  } else {
    safeguards.push({
      name: 'processes',
      active: false,
      detail: `${processes} wanted, not enforced: Hearth runs as root, which RLIMIT_NPROC exempts, and neither a cgroup Hearth may create nor a systemd scope has the pids controller`,
    });
  }

  if (settings.cpus !== undefined) {
    if (heldBy.cpu) {
      cgroup.cpus = settings.cpus;
      safeguards.push(on('cpus', `${settings.cpus} (${heldBy.cpu})`));
    } else {
      safeguards.push({
        name: 'cpus',
        active: false,
        detail: `${settings.cpus} wanted, not enforced: no writable cgroup with the cpu controller`,
      });
    }
  }

  const tmpMb = settings.tmpMb ?? DEFAULT_TMP_MB;
  safeguards.push(
    opts.tmpfsSize
      ? on('temp space', `${tmpMb} MB each for /tmp, /var/tmp and the home (tmpfs)`)
      : {
          name: 'temp space',
          active: false,
          detail: `${tmpMb} MB wanted, not enforced: this bubblewrap has no --size (0.7 or later has)`,
        },
  );
  safeguards.push(
    on('file size', `${DEFAULT_FILE_SIZE_MB} MB per file, CPU time: the call's timeout + ${CPU_SLACK_S}s`),
  );

  return {
    rlimits: (timeoutMs) =>
      clampLimits(
        {
          ...limitsFor(timeoutMs),
          addressSpaceBytes: addressSpaceMb === undefined ? undefined : addressSpaceMb * MB,
          processes: opts.root ? undefined : processes,
        },
        opts.hard ?? {},
      ),
    cgroup,
    tmpBytes: opts.tmpfsSize ? tmpMb * MB : undefined,
    safeguards,
  };
}

function on(name: string, detail: string): Safeguard {
  return { name, active: true, detail };
}
