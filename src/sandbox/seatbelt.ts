import { access, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildSandboxEnv, hostGitIdentity, identityGitconfig } from './env.js';
import { shellJoin } from './host-command.js';
import { processIo, runProcess } from './process.js';
import { PROTECTED_FILES, withProtection } from './protected-paths.js';
import { type Safeguard, type Sandbox, SandboxError, type SandboxOptions } from './types.js';
import { realWorkspace, resolveCwd } from './workspace.js';

const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

export interface SeatbeltPlan {
  workspace: string;
  /** Private directory holding this sandbox's HOME and TMPDIR. */
  scratch: string;
  /** Unreadable trees: the real home, other users, other volumes. */
  hidden: string[];
  /** Writable besides the workspace and the scratch directory (the system temp dirs). */
  writable: string[];
  /** Readable even inside a hidden tree (toolchains under the home). */
  extraReadOnly: string[];
  /** Directories whose rename or removal would carry protected paths away (.git). */
  pinned: string[];
  /** Never writable, whether they exist yet or not; a directory covers what is below it. */
  protected: string[];
  network: boolean;
}

/** A string literal in the Scheme-like SBPL. */
function sbplString(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

function filters(kind: 'subpath' | 'literal', paths: readonly string[]): string {
  return paths.map((p) => `(${kind} ${sbplString(p)})`).join(' ');
}

/**
 * The Seatbelt profile for a plan. Seatbelt judges the resolved path of each access, so symlinks
 * planted in the workspace gain nothing, and it can deny paths that do not exist yet, so protected
 * files are covered before they are created. Later rules win over earlier ones: the denials follow
 * the grants they narrow.
 */
export function buildSeatbeltProfile(plan: SeatbeltPlan): string {
  const readable = [plan.workspace, plan.scratch, ...plan.extraReadOnly];
  const writable = [plan.workspace, plan.scratch, ...plan.writable];
  const lines = [
    '(version 1)',
    '(deny default)',
    '(allow process-fork)',
    '(allow process-exec)',
    '(allow process-info* (target same-sandbox))',
    '(allow signal (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow mach-lookup)',
    '(allow ipc-posix-shm)',
    '(allow ipc-posix-sem)',
    '(allow pseudo-tty)',
    '(allow file-ioctl)',
    '(allow user-preference-read)',
    '(allow file-read*)',
  ];
  if (plan.hidden.length > 0) lines.push(`(deny file-read* ${filters('subpath', plan.hidden)})`);
  // stat() on the way down stays possible, or getcwd() and realpath() would fail inside the workspace.
  lines.push('(allow file-read-metadata)');
  lines.push(`(allow file-read* ${filters('subpath', readable)})`);
  lines.push(
    `(allow file-write* ${filters('subpath', writable)} ${filters('literal', ['/dev/null', '/dev/zero', '/dev/tty'])}` +
      ' (regex #"^/dev/fd/[0-9]+$") (regex #"^/dev/ttys[0-9]+$"))',
  );
  const denied = [filters('subpath', plan.protected), filters('literal', plan.pinned)].filter(
    (f) => f !== '',
  );
  if (denied.length > 0) lines.push(`(deny file-write* ${denied.join(' ')})`);
  if (plan.network) lines.push('(allow network*)', '(allow system-socket)');
  return `${lines.join('\n')}\n`;
}

/** Paths to protect in a workspace under Seatbelt: the fixed names plus what protectWorkspace found. */
export function seatbeltProtected(
  workspace: string,
  found: { pinned: string[]; readOnly: string[] },
): string[] {
  const fixed = ['.hearth', '.git/hooks', '.git/config', '.git/config.worktree', ...PROTECTED_FILES];
  return [...new Set([...fixed.map((f) => path.join(workspace, f)), ...found.readOnly])];
}

/**
 * macOS: sandbox-exec with a generated profile. Weaker than bwrap in one respect: there is no PID
 * namespace, so a background process that leaves the process group (setsid) survives the command.
 */
export async function createSeatbeltSandbox(opts: SandboxOptions): Promise<Sandbox> {
  if (process.platform !== 'darwin') throw new SandboxError('Seatbelt runs on macOS only');
  try {
    await access(SANDBOX_EXEC);
  } catch {
    throw new SandboxError(`${SANDBOX_EXEC} not found`);
  }
  const workspace = await realWorkspace(opts.workspace);
  const systemTmp = await realpath(os.tmpdir());
  const scratch = await mkdtemp(path.join(systemTmp, 'hearth-seatbelt-'));
  const home = path.join(scratch, 'home');
  const tmp = path.join(scratch, 'tmp');
  await mkdir(home);
  await mkdir(tmp);
  const realHome = await realpath(os.homedir()).catch(() => os.homedir());
  const extraReadOnly = await Promise.all((opts.readOnlyPaths ?? []).map((p) => realpath(p).catch(() => p)));
  const hostEnv = opts.hostEnv ?? process.env;
  const identity = await hostGitIdentity(hostEnv);
  const gitconfig = identityGitconfig(identity);
  if (gitconfig !== undefined) await writeFile(path.join(home, '.gitconfig'), gitconfig, { mode: 0o600 });
  const env = buildSandboxEnv({
    source: hostEnv,
    allow: opts.envAllow,
    home,
    user: os.userInfo().username,
    extra: { TMPDIR: `${tmp}/`, HEARTH_SANDBOXED: 'seatbelt', ...identity.variables },
  });

  return {
    kind: 'seatbelt',
    description: `seatbelt (sandbox-exec): ${workspace} read-write, home hidden, network ${opts.network ? 'on' : 'off'}`,
    safeguards: seatbeltSafeguards(opts),
    async exec(req) {
      const cwd = await resolveCwd(workspace, req.cwd);
      return withProtection(workspace, (found) => {
        const profile = buildSeatbeltProfile({
          workspace,
          scratch,
          hidden: ['/Users', '/Volumes', realHome],
          writable: ['/private/tmp', systemTmp],
          extraReadOnly,
          pinned: found.pinned,
          protected: seatbeltProtected(workspace, found),
          network: opts.network,
        });
        return runProcess({
          command: `exec ${shellJoin([SANDBOX_EXEC, '-p', profile, '/bin/bash', '-c', req.command])}`,
          cwd,
          env,
          ...processIo(req),
          clock: opts.clock,
        });
      });
    },
    async dispose() {
      await rm(scratch, { recursive: true, force: true });
    },
  };
}

function seatbeltSafeguards(opts: SandboxOptions): Safeguard[] {
  const off = (name: string, detail: string): Safeguard => ({ name, active: false, detail });
  const guards: Safeguard[] = [
    {
      name: 'filesystem',
      active: true,
      detail: 'only the workspace and temp dirs are writable; the home is hidden',
    },
    { name: 'network', active: true, detail: opts.network ? 'on (sandbox.network)' : 'none' },
    {
      name: 'protected files',
      active: true,
      detail: '.hearth, git hooks and config, shell start-up files: never writable, present or not',
    },
    off('process tree', 'no PID namespace: a background process that calls setsid survives the command'),
    off(
      'memory',
      `${opts.memoryMb === undefined ? 'no limit' : `${opts.memoryMb} MB wanted`}: Seatbelt cannot limit memory`,
    ),
    off('processes', 'Seatbelt cannot limit the process count'),
    off('temp space', 'not limited: temp files go to the disk'),
  ];
  if (opts.cpus !== undefined) guards.push(off('cpus', `${opts.cpus} wanted, not enforced by Seatbelt`));
  return guards;
}
