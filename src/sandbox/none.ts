import os from 'node:os';
import { detectCommandGroups, inGroup } from './command-group.js';
import { buildSandboxEnv, FALLBACK_PATH } from './env.js';
import { findExecutable, shellJoin } from './host-command.js';
import { clampLimits, DEFAULT_MAX_PROCESSES, hostHardLimits, limitedArgv, limitsFor } from './limits.js';
import { findShell, processIo, runProcess } from './process.js';
import type { Safeguard, Sandbox, SandboxOptions } from './types.js';
import { realWorkspace, resolveCwd } from './workspace.js';

export const NO_SANDBOX_WARNING =
  'NO SANDBOX: the filesystem is not isolated. Commands run directly on this machine, can read and ' +
  'write all of your files and reach the network; only the environment is filtered and CPU, memory, ' +
  'file-size, disk-write and (where a cgroup can hold it) process limits apply.';

/**
 * No isolation at all: the command runs as the user, on the user's files. The environment is still
 * filtered, so secrets exported in the user's shell do not reach the model's commands, and resource
 * limits stop the worst runaways. Where a command group can be made (command-group.ts), each command
 * runs in one: its process count is limited and every process it started, setsid or not, is killed
 * when it ends. Anyone choosing this must be told (NO_SANDBOX_WARNING).
 */
export async function createNoneSandbox(opts: SandboxOptions): Promise<Sandbox> {
  const workspace = await realWorkspace(opts.workspace);
  const hostEnv = opts.hostEnv ?? process.env;
  const env = buildSandboxEnv({
    source: hostEnv,
    allow: opts.envAllow,
    home: hostEnv.HOME || os.homedir(),
    user: os.userInfo().username,
    extra: { HEARTH_SANDBOXED: 'none' },
  });
  const prlimit =
    process.platform === 'linux' ? findExecutable('prlimit', `${env.PATH}:${FALLBACK_PATH}`) : null;
  const shell = findShell(env.PATH ?? FALLBACK_PATH);
  const [hard, groups] = await Promise.all([
    hostHardLimits(),
    process.platform === 'linux' ? detectCommandGroups(hostEnv) : undefined,
  ]);
  // Only the process count: memory keeps its per-process meaning here (see noneSafeguards).
  const maxProcesses = opts.maxProcesses ?? DEFAULT_MAX_PROCESSES;
  const heldBy = groups?.heldBy.pids;
  return {
    kind: 'none',
    ...(opts.linkedRepo ? { linkedRepo: opts.linkedRepo } : {}),
    description: `none: NOT SANDBOXED, commands run on the host with full file access (limits via ${prlimit ? 'prlimit' : 'ulimit'})`,
    safeguards: noneSafeguards(limitsFor(0, opts.memoryMb).addressSpaceBytes ?? 0, opts, heldBy),
    async exec(req) {
      const cwd = await resolveCwd(workspace, req.cwd);
      const argv = limitedArgv(
        [shell, '-c', req.command],
        clampLimits(limitsFor(req.timeoutMs, opts.memoryMb), hard),
        prlimit,
      );
      const group = heldBy ? await groups!.open({ maxProcesses }) : null;
      return inGroup(group, maxProcesses, (g) =>
        runProcess({
          command: g ? g.wrap(argv) : `exec ${shellJoin(argv)}`,
          cwd,
          env,
          ...processIo(req),
          clock: opts.clock,
        }),
      );
    },
    async dispose() {},
  };
}

function noneSafeguards(addressSpace: number, opts: SandboxOptions, pidsHeldBy?: string): Safeguard[] {
  const off = (name: string, detail: string): Safeguard => ({ name, active: false, detail });
  const wanted = (value: number | undefined, what: string) =>
    value === undefined
      ? `${what}: not enforced without a sandbox`
      : `${value} ${what} wanted, not enforced without a sandbox`;
  const guards = [
    off('filesystem', 'none: commands can read and write all of your files'),
    off('network', 'not isolated'),
    off('protected files', 'not protected: commands can change git hooks, .hearth and start-up files'),
    pidsHeldBy
      ? {
          name: 'process tree',
          active: true,
          detail: `every process a command started is killed when it ends (${pidsHeldBy})`,
        }
      : off('process tree', 'background processes that leave the process group (setsid) survive the command'),
    {
      name: 'memory',
      active: true,
      detail: `each process may reserve ${Math.round(addressSpace / 1024 / 1024)} MB of address space (no total limit)`,
    },
    pidsHeldBy
      ? {
          name: 'processes',
          active: true,
          detail: `${opts.maxProcesses ?? DEFAULT_MAX_PROCESSES} at once per command (sandbox.max_processes; ${pidsHeldBy} pids)`,
        }
      : off('processes', wanted(opts.maxProcesses ?? DEFAULT_MAX_PROCESSES, 'processes')),
    off('temp space', wanted(opts.tmpMb, 'MB of temp space')),
  ];
  if (opts.cpus !== undefined) guards.push(off('cpus', wanted(opts.cpus, 'CPUs')));
  return guards;
}
