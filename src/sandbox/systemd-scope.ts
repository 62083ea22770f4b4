import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { type CgroupLimits, type Controller, cgroupDirOf } from './cgroup.js';
import { FALLBACK_PATH } from './env.js';
import { findExecutable, runHostCommand, shellJoin } from './host-command.js';

/**
 * Per-command transient systemd scopes (`systemd-run --scope -p TasksMax=…`): the way to a cgroup
 * with limits where systemd owns the cgroup tree and Hearth's own cgroup cannot hand controllers
 * down, as on a desktop (cgroup v2, the user's manager delegating pids, memory and cpu to its
 * scopes) or a server where Hearth runs as a service. systemd-run registers the scope and then execs
 * the command in the same process, so the sandbox's wrapper stays the process Hearth started.
 *
 * Used only where systemd is the init (/run/systemd/system) and a probe scope shows the limits
 * really applied: a manager that lacks a controller accepts the property and enforces nothing.
 */

export interface ScopeSupport {
  /** The user's own manager (`--user`), as a non-root user; else the system manager. */
  user: boolean;
  systemdRun: string;
  systemctl: string;
  /** What systemd-run needs to reach the user's manager, kept out of the command's environment. */
  env: Record<string, string>;
  /** env(1), which sets and then unsets those around systemd-run. */
  envProgram: string;
  /** The limits a scope here enforces. */
  controllers: Controller[];
}

const PROBE = { pids: 77, memoryBytes: 7 * 1024 * 1024 * 1024, cpuPercent: 77 };
let sequence = 0;

function flags(support: ScopeSupport, unit: string): string[] {
  return [...(support.user ? ['--user'] : []), '--scope', '--quiet', '--collect', `--unit=${unit}`];
}

function properties(limits: CgroupLimits, controllers: readonly Controller[]): string[] {
  const props: string[] = [];
  if (limits.maxProcesses !== undefined && controllers.includes('pids'))
    props.push('-p', `TasksMax=${limits.maxProcesses}`);
  if (limits.memoryBytes !== undefined && controllers.includes('memory'))
    props.push('-p', `MemoryMax=${limits.memoryBytes}`, '-p', 'MemorySwapMax=0');
  if (limits.cpus !== undefined && controllers.includes('cpu'))
    props.push('-p', `CPUQuota=${Math.max(1, Math.round(limits.cpus * 100))}%`);
  return props;
}

/** The command line that runs `argv` in a new scope with the limits, its own environment restored. */
function scopeArgv(
  support: ScopeSupport,
  unit: string,
  limits: CgroupLimits,
  argv: readonly string[],
): string[] {
  const names = Object.keys(support.env);
  const env = support.envProgram;
  const setEnv = names.length === 0 ? [] : [env, ...names.map((n) => `${n}=${support.env[n]}`)];
  const unsetEnv = names.length === 0 ? [] : [env, ...names.flatMap((n) => ['-u', n])];
  return [
    ...setEnv,
    support.systemdRun,
    ...flags(support, unit),
    ...properties(limits, support.controllers),
    '--',
    ...unsetEnv,
    ...argv,
  ];
}

/** One command's scope: named before it starts, stopped (every process killed) after. */
export class CommandScope {
  readonly unit: string;

  constructor(
    private readonly support: ScopeSupport,
    private readonly limits: CgroupLimits,
  ) {
    this.unit = `hearth-${process.pid}-${++sequence}-${randomBytes(3).toString('hex')}.scope`;
  }

  wrap(argv: readonly string[]): string {
    return `exec ${shellJoin(scopeArgv(this.support, this.unit, this.limits, argv))}`;
  }

  /** Not read back from a scope: systemd may have collected it the moment the command ended. */
  async refusedForks(): Promise<number> {
    return 0;
  }

  /** Kills whatever is left in the scope; an empty scope is already gone (--collect). */
  async remove(): Promise<void> {
    await runHostCommand(
      this.support.systemctl,
      [...(this.support.user ? ['--user'] : []), 'kill', '--signal=SIGKILL', this.unit],
      { env: { PATH: FALLBACK_PATH, ...this.support.env } },
    );
  }
}

/**
 * Whether transient scopes enforce limits here, and which: starts one holding `sleep`, reads the
 * limits back from its cgroup, and stops it. Null where systemd is not the init or nothing held.
 */
export async function detectSystemdScope(hostEnv: NodeJS.ProcessEnv): Promise<ScopeSupport | null> {
  if (process.platform !== 'linux' || !existsSync('/run/systemd/system')) return null;
  const search = `${hostEnv.PATH ?? ''}:${FALLBACK_PATH}`;
  const systemdRun = findExecutable('systemd-run', search);
  const systemctl = findExecutable('systemctl', search);
  const envProgram = findExecutable('env', FALLBACK_PATH);
  if (systemdRun === null || systemctl === null || envProgram === null) return null;
  const user = process.getuid?.() !== 0;
  const env: Record<string, string> = {};
  if (user) {
    if (!hostEnv.XDG_RUNTIME_DIR) return null;
    env.XDG_RUNTIME_DIR = hostEnv.XDG_RUNTIME_DIR;
    if (hostEnv.DBUS_SESSION_BUS_ADDRESS) env.DBUS_SESSION_BUS_ADDRESS = hostEnv.DBUS_SESSION_BUS_ADDRESS;
  }
  const support: ScopeSupport = {
    user,
    systemdRun,
    systemctl,
    env,
    envProgram,
    controllers: ['pids', 'memory', 'cpu'],
  };
  const scope = new CommandScope(support, {
    maxProcesses: PROBE.pids,
    memoryBytes: PROBE.memoryBytes,
    cpus: PROBE.cpuPercent / 100,
  });
  const sleep = findExecutable('sleep', FALLBACK_PATH) ?? 'sleep';
  const child = spawn('/bin/sh', ['-c', scope.wrap([sleep, '30'])], {
    stdio: 'ignore',
    env: { PATH: FALLBACK_PATH },
  });
  child.on('error', () => undefined);
  try {
    if (child.pid === undefined || !(await execed(child.pid, 'sleep'))) return null;
    const held: Controller[] = [];
    const read = async (c: Controller, file: string) =>
      (await readFile(`${await cgroupDirOf(child.pid!, c)}/${file}`, 'utf8').catch(() => '')).trim();
    if ((await read('pids', 'pids.max')) === String(PROBE.pids)) held.push('pids');
    const memory = (await read('memory', 'memory.max')) || (await read('memory', 'memory.limit_in_bytes'));
    if (memory === String(PROBE.memoryBytes)) held.push('memory');
    const cpu = (await read('cpu', 'cpu.max')) || (await read('cpu', 'cpu.cfs_quota_us'));
    if (/^77000\b/.test(cpu)) held.push('cpu');
    return held.length === 0 ? null : { ...support, controllers: held };
  } finally {
    child.kill('SIGKILL');
    await scope.remove();
  }
}

/** Waits (up to 5 s) until `pid` runs `name`: systemd-run has made the scope and exec'd. */
async function execed(pid: number, name: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    const comm = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => null);
    if (comm === null) return false;
    if (comm.trim() === name) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
