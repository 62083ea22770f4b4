/*
 * Our own bubblewrap layer rather than @anthropic-ai/sandbox-runtime. Version 0.0.78 was run against
 * our escape battery on Debian 12 (as root, bubblewrap 0.8.0, socat installed). It blocked writes
 * outside the workspace and to .git/hooks and .git/config, background processes did not outlive the
 * call, and its mounts could not be unmounted or remounted from inside. It still does not fit:
 * - Reads are allowed everywhere unless listed in denyRead: /etc/gshadow, the workspace's siblings
 *   and the rest of the disk were readable. We want the opposite default, invisible unless granted.
 * - To protect dotfiles that may be created later (.bashrc, .mcp.json, .vscode, ...) it binds
 *   /dev/null over them, which leaves character devices in the workspace: `git status` lists them
 *   and `git add -A` fails ("can only add regular files").
 * - The environment passes through whole (FAKE_SECRET was visible) and .hearth/ stays writable
 *   unless configured.
 * - Its API is one SandboxManager per process with one configuration, whereas the gateway runs
 *   sessions on different workspaces in one process (DESIGN.md, convention 5).
 * - It adds socat, HTTP and SOCKS proxies, zod 3 and node-forge for per-domain network rules, which
 *   we do not offer yet (network is on or off). Worth another look if we want domain allowlists.
 */

import { realpath } from 'node:fs/promises';
import os from 'node:os';
import { buildSandboxEnv, FALLBACK_PATH, hostGitIdentity } from './env.js';
import { findExecutable, firstLine, runHostCommand, shellJoin } from './host-command.js';
import { etcMasks, type Mask, resolvConfTarget, type SystemEntry, systemEntries } from './host-layout.js';
import { findShell, type ProcessResult, runProcess } from './process.js';
import { type ProtectedLayout, protectWorkspace } from './protected-paths.js';
import { type ExecRequest, type Sandbox, SandboxError, type SandboxOptions } from './types.js';
import { isWithin, realWorkspace, resolveCwd } from './workspace.js';

/** HOME inside when the real home cannot be hidden because the workspace contains it. */
export const FALLBACK_SANDBOX_HOME = '/tmp/hearth-home';

export interface BwrapPlan {
  workspace: string;
  cwd: string;
  /** HOME inside the sandbox. */
  home: string;
  /** The real home, covered by an empty tmpfs; null when the workspace contains it. */
  hideHome: string | null;
  network: boolean;
  system: SystemEntry[];
  etcMasks: Mask[];
  /** Real path of /etc/resolv.conf when it lives outside /etc. */
  resolvConf: string | null;
  extraReadOnly: string[];
  protect: ProtectedLayout;
  /** bubblewrap ≥ 0.8 can forbid nested user namespaces, which would bring capabilities back. */
  disableUserns: boolean;
  shell: string;
  command: string;
}

/**
 * The bwrap command line for one command. Order matters: later mounts cover earlier ones, so the
 * workspace comes after the hidden home (it may live inside it) and the read-only paths come last.
 */
export function buildBwrapArgs(plan: BwrapPlan): string[] {
  // Two locks on the read-only mounts, each enough alone (the escape battery fails only without
  // both): --cap-drop ALL, because bwrap started by root keeps every capability inside its user
  // namespace, enough to unmount a read-only bind; and --disable-userns, which runs the command in
  // a further nested user namespace, where the mounts are locked, and forbids creating more.
  const args = ['--unshare-all', '--unshare-user'];
  if (plan.network) args.push('--share-net');
  if (plan.disableUserns) args.push('--disable-userns');
  // The PID namespace (from --unshare-all) makes bwrap's reaper PID 1: when the command exits, or
  // bwrap is killed on timeout, the kernel kills every process left inside, setsid or not.
  // --new-session keeps the command from pushing keystrokes into our terminal (TIOCSTI).
  args.push('--die-with-parent', '--new-session', '--cap-drop', 'ALL');

  for (const entry of plan.system) {
    if (entry.symlinkTo !== undefined) args.push('--symlink', entry.symlinkTo, entry.path);
    else args.push('--ro-bind', entry.path, entry.path);
  }
  for (const mask of plan.etcMasks) {
    if (mask.dir) args.push('--tmpfs', mask.path, '--remount-ro', mask.path);
    else args.push('--ro-bind', '/dev/null', mask.path);
  }
  if (plan.network && plan.resolvConf !== null) args.push('--ro-bind', plan.resolvConf, plan.resolvConf);

  args.push('--proc', '/proc', '--dev', '/dev');
  // bwrap makes tmpfs 0755, which would leave /tmp writable only by root.
  args.push('--perms', '1777', '--tmpfs', '/tmp', '--perms', '1777', '--tmpfs', '/var/tmp');
  if (plan.hideHome !== null) args.push('--tmpfs', plan.hideHome);
  if (plan.home !== plan.hideHome) args.push('--dir', plan.home);
  for (const p of plan.extraReadOnly) args.push('--ro-bind-try', p, p);

  args.push('--bind', plan.workspace, plan.workspace);
  for (const p of plan.protect.pinned) args.push('--bind', p, p);
  for (const p of plan.protect.readOnly) args.push('--ro-bind', p, p);

  args.push('--chdir', plan.cwd, '--', plan.shell, '-c', plan.command);
  return args;
}

export interface BwrapTool {
  path: string;
  /** As bwrap reports it, e.g. "bubblewrap 0.8.0". */
  version: string;
  supportsDisableUserns: boolean;
}

/** Finds bubblewrap and what it supports; a SandboxError says how to get it when it is missing. */
async function findBwrap(searchPath = process.env.PATH): Promise<BwrapTool> {
  const bwrap = findExecutable('bwrap', `${searchPath ?? ''}:${FALLBACK_PATH}`);
  if (bwrap === null) throw new SandboxError('bwrap not installed (apt install bubblewrap)');
  const [version, help] = await Promise.all([
    runHostCommand(bwrap, ['--version']),
    runHostCommand(bwrap, ['--help']),
  ]);
  return {
    path: bwrap,
    version: firstLine(version.stdout) || 'bubblewrap (unknown version)',
    supportsDisableUserns: `${help.stdout}${help.stderr}`.includes('--disable-userns'),
  };
}

/**
 * A bubblewrap sandbox for one workspace. Runs `true` inside before returning, because bwrap can be
 * installed and still unusable (containers and some distributions forbid user namespaces); the
 * SandboxError then carries bwrap's own complaint.
 */
export async function createBwrapSandbox(opts: SandboxOptions): Promise<Sandbox> {
  if (process.platform !== 'linux') throw new SandboxError('bwrap runs on Linux only');
  const tool = await findBwrap();
  const workspace = await realWorkspace(opts.workspace);
  const realHome = await realpath(os.homedir()).catch(() => os.homedir());
  const hideHome = realHome === '/' || isWithin(workspace, realHome) ? null : realHome;
  const home = hideHome ?? FALLBACK_SANDBOX_HOME;

  const [system, masks, resolvConf, identity, extraReadOnly] = await Promise.all([
    systemEntries(),
    etcMasks(),
    resolvConfTarget(),
    hostGitIdentity(workspace, process.env),
    Promise.all((opts.readOnlyPaths ?? []).map((p) => realpath(p).catch(() => p))),
  ]);
  const env = buildSandboxEnv({
    source: process.env,
    allow: opts.envAllow,
    home,
    user: os.userInfo().username,
    extra: { TMPDIR: '/tmp', HEARTH_SANDBOX: 'bwrap', ...identity },
  });
  const shell = findShell('/usr/local/bin:/usr/bin:/bin');

  let disableUserns = tool.supportsDisableUserns;
  const run = async (
    req: Pick<ExecRequest, 'command' | 'timeoutMs' | 'signal' | 'maxOutputBytes' | 'onOutput'>,
    cwd: string,
  ): Promise<ProcessResult> => {
    const args = buildBwrapArgs({
      workspace,
      cwd,
      home,
      hideHome,
      network: opts.network,
      system,
      etcMasks: masks,
      resolvConf,
      extraReadOnly,
      protect: await protectWorkspace(workspace),
      disableUserns,
      shell,
      command: req.command,
    });
    // `exec` makes bwrap the process-group leader runProcess kills on timeout.
    return runProcess({
      command: `exec ${shellJoin([tool.path, ...args])}`,
      cwd,
      env,
      timeoutMs: req.timeoutMs,
      signal: req.signal,
      maxOutputBytes: req.maxOutputBytes,
      onOutput: req.onOutput,
      clock: opts.clock,
    });
  };

  let trial = await run({ command: 'true', timeoutMs: 15_000 }, workspace);
  if (trial.exitCode !== 0 && disableUserns) {
    // Some kernels refuse the sysctl behind --disable-userns; the rest of the sandbox still holds.
    disableUserns = false;
    trial = await run({ command: 'true', timeoutMs: 15_000 }, workspace);
  }
  if (trial.exitCode !== 0) {
    const why = firstLine(trial.output) || (trial.timedOut ? 'timed out' : `exit code ${trial.exitCode}`);
    throw new SandboxError(`bwrap is installed but cannot run here: ${why}`);
  }

  return {
    kind: 'bwrap',
    description:
      `bwrap (${tool.version}): ${workspace} read-write, system read-only, ` +
      `${hideHome === null ? 'home inside the workspace' : 'home hidden'}, ` +
      `network ${opts.network ? 'on' : 'off'}`,
    async exec(req) {
      return run(req, await resolveCwd(workspace, req.cwd));
    },
    async dispose() {
      // Every command ran in its own namespaces, which died with it: nothing is held between calls.
    },
  };
}
