import os from 'node:os';
import { buildSandboxEnv, FALLBACK_PATH } from './env.js';
import { findExecutable, shellJoin, shellQuote } from './host-command.js';
import { findShell, runProcess } from './process.js';
import type { Sandbox, SandboxOptions } from './types.js';
import { realWorkspace, resolveCwd } from './workspace.js';

export interface ResourceLimits {
  cpuSeconds: number;
  /** Virtual address space, not resident memory: runtimes reserve far more than they touch. */
  addressSpaceBytes: number;
  fileSizeBytes: number;
}

const MB = 1024 * 1024;
/** Generous on purpose: Node, Java and Go reserve gigabytes of address space just to start. */
export const DEFAULT_ADDRESS_SPACE_MB = 8192;
const DEFAULT_FILE_SIZE_MB = 4096;
/** CPU time beyond the wall-clock timeout, so that the timeout stays the limit that normally fires. */
const CPU_SLACK_S = 5;

export const NO_SANDBOX_WARNING =
  'NO SANDBOX: the filesystem is not isolated. Commands run directly on this machine, can read and ' +
  'write all of your files and reach the network; only the environment is filtered and CPU, memory ' +
  'and file-size limits apply. Install bubblewrap (apt install bubblewrap) or use docker/podman.';

export function limitsFor(timeoutMs: number, memoryMb?: number): ResourceLimits {
  return {
    cpuSeconds: Math.ceil(timeoutMs / 1000) + CPU_SLACK_S,
    addressSpaceBytes: (memoryMb ?? DEFAULT_ADDRESS_SPACE_MB) * MB,
    fileSizeBytes: DEFAULT_FILE_SIZE_MB * MB,
  };
}

/**
 * The command line with its limits applied: through prlimit when present (it sets hard limits the
 * command cannot raise again), else through the shell's ulimit, each limit on its own so that one a
 * platform lacks (macOS has no -v) does not cancel the others. bash counts -v and -f in KiB.
 */
export function limitedCommand(
  command: string,
  limits: ResourceLimits,
  prlimit: string | null,
  shell: string,
): string {
  if (prlimit !== null) {
    return `exec ${shellJoin([
      prlimit,
      `--cpu=${limits.cpuSeconds}`,
      `--as=${limits.addressSpaceBytes}`,
      `--fsize=${limits.fileSizeBytes}`,
      '--',
      shell,
      '-c',
      command,
    ])}`;
  }
  const kib = (bytes: number) => Math.floor(bytes / 1024);
  return [
    `ulimit -t ${limits.cpuSeconds} 2>/dev/null`,
    `ulimit -v ${kib(limits.addressSpaceBytes)} 2>/dev/null`,
    `ulimit -f ${kib(limits.fileSizeBytes)} 2>/dev/null`,
    `exec ${shellQuote(shell)} -c ${shellQuote(command)}`,
  ].join('; ');
}

/**
 * No isolation at all: the command runs as the user, on the user's files. The environment is still
 * filtered, so secrets exported in the user's shell do not reach the model's commands, and resource
 * limits stop the worst runaways. Anyone choosing this must be told (NO_SANDBOX_WARNING).
 */
export async function createNoneSandbox(opts: SandboxOptions): Promise<Sandbox> {
  const workspace = await realWorkspace(opts.workspace);
  const env = buildSandboxEnv({
    source: process.env,
    allow: opts.envAllow,
    home: os.homedir(),
    user: os.userInfo().username,
    extra: { HEARTH_SANDBOX: 'none' },
  });
  const prlimit =
    process.platform === 'linux' ? findExecutable('prlimit', `${env.PATH}:${FALLBACK_PATH}`) : null;
  const shell = findShell(env.PATH ?? FALLBACK_PATH);
  return {
    kind: 'none',
    description: `none: NOT SANDBOXED, commands run on the host with full file access (limits via ${prlimit ? 'prlimit' : 'ulimit'})`,
    async exec(req) {
      const cwd = await resolveCwd(workspace, req.cwd);
      return runProcess({
        command: limitedCommand(req.command, limitsFor(req.timeoutMs, opts.memoryMb), prlimit, shell),
        cwd,
        env,
        timeoutMs: req.timeoutMs,
        signal: req.signal,
        maxOutputBytes: req.maxOutputBytes,
        onOutput: req.onOutput,
        clock: opts.clock,
      });
    },
    async dispose() {},
  };
}
