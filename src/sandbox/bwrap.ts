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

import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type CommandGroup, detectCommandGroups, inGroup } from './command-group.js';
import { BRIDGE_PORT, BRIDGE_SCRIPT, type DomainProxy, startDomainProxy } from './domain-proxy.js';
import { buildSandboxEnv, FALLBACK_PATH, hostGitIdentity, identityGitconfig } from './env.js';
import { findExecutable, firstLine, runHostCommand, shellJoin } from './host-command.js';
import { etcMasks, type Mask, resolvConfTarget, type SystemEntry, systemEntries } from './host-layout.js';
import { hostHardLimits, type LimitPlan, limitedArgv, planLimits } from './limits.js';
import { type LinkedRepo, linkedRepoMounts } from './linked-repo.js';
import { SandboxTree } from './pid-tree.js';
import { findShell, KILL_GRACE_MS, type ProcessResult, processIo, runProcess } from './process.js';
import { type ProtectedLayout, withProtection } from './protected-paths.js';
import {
  type ExecRequest,
  type Safeguard,
  type Sandbox,
  SandboxError,
  type SandboxOptions,
} from './types.js';
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
  /** Size of each tmpfs (/tmp, /var/tmp, the hidden home); unset: no size (old bubblewrap). */
  tmpBytes?: number;
  /** A host file with the user's git identity, shown read-only as ~/.gitconfig inside. */
  gitconfig?: string;
  /** What runs inside: the shell and the command, under their rlimits (limits.ts). */
  inner: string[];
  /** The directory holding the domain proxy's socket, shown inside at the same path. */
  proxyDir?: string;
  /** The workspace is shown read-only (a program that only reads it: reader.ts). */
  workspaceReadOnly?: boolean;
  /** A Hearth worktree's main repository, as much of it as its git needs (linked-repo.ts). */
  linkedRepo?: LinkedRepo;
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
  // Every tmpfs lives in RAM: each gets a size, or one command could fill the machine's memory.
  const sized = plan.tmpBytes === undefined ? [] : ['--size', String(plan.tmpBytes)];
  // bwrap makes tmpfs 0755, which would leave /tmp writable only by root.
  args.push(
    '--perms',
    '1777',
    ...sized,
    '--tmpfs',
    '/tmp',
    '--perms',
    '1777',
    ...sized,
    '--tmpfs',
    '/var/tmp',
  );
  if (plan.hideHome !== null) args.push(...sized, '--tmpfs', plan.hideHome);
  if (plan.home !== plan.hideHome) args.push('--dir', plan.home);
  if (plan.gitconfig !== undefined)
    args.push('--ro-bind', plan.gitconfig, path.join(plan.home, '.gitconfig'));
  for (const p of plan.extraReadOnly) args.push('--ro-bind-try', p, p);

  if (plan.proxyDir !== undefined) args.push('--bind', plan.proxyDir, plan.proxyDir);
  args.push(plan.workspaceReadOnly ? '--ro-bind' : '--bind', plan.workspace, plan.workspace);
  for (const p of plan.protect.pinned) args.push('--bind', p, p);
  for (const p of plan.protect.readOnly) args.push('--ro-bind', p, p);
  if (plan.linkedRepo !== undefined) {
    for (const m of linkedRepoMounts(plan.linkedRepo)) {
      const kind = m.writable ? '--bind' : '--ro-bind';
      args.push(m.try ? `${kind}-try` : kind, m.path, m.path);
    }
  }

  args.push('--chdir', plan.cwd, '--', ...plan.inner);
  return args;
}

export interface BwrapTool {
  path: string;
  /** As bwrap reports it, e.g. "bubblewrap 0.8.0". */
  version: string;
  supportsDisableUserns: boolean;
  supportsSize: boolean;
}

/** Finds bubblewrap and what it supports; a SandboxError says how to get it when it is missing. */
export async function findBwrap(searchPath = process.env.PATH): Promise<BwrapTool> {
  const bwrap = findExecutable('bwrap', `${searchPath ?? ''}:${FALLBACK_PATH}`);
  if (bwrap === null) throw new SandboxError('bwrap not installed');
  const [version, help] = await Promise.all([
    runHostCommand(bwrap, ['--version']),
    runHostCommand(bwrap, ['--help']),
  ]);
  const usage = `${help.stdout}${help.stderr}`;
  return {
    path: bwrap,
    version: firstLine(version.stdout) || 'bubblewrap (unknown version)',
    supportsDisableUserns: usage.includes('--disable-userns'),
    supportsSize: usage.includes('--size'),
  };
}

/** How long a finished command's processes may take to be gone before the checks run anyway. */
const TREE_GONE_WAIT_MS = 2 * KILL_GRACE_MS;

/**
 * A bubblewrap sandbox for one workspace. Runs `true` inside before returning, because bwrap can be
 * installed and still unusable (containers and some distributions forbid user namespaces); the
 * SandboxError then carries bwrap's own complaint.
 */
export async function createBwrapSandbox(opts: SandboxOptions): Promise<Sandbox> {
  if (process.platform !== 'linux') throw new SandboxError('bwrap runs on Linux only');
  const hostEnv = opts.hostEnv ?? process.env;
  const tool = await findBwrap(hostEnv.PATH);
  const workspace = await realWorkspace(opts.workspace);
  const realHome = await realpath(os.homedir()).catch(() => os.homedir());
  const hideHome = realHome === '/' || isWithin(workspace, realHome) ? null : realHome;
  const home = hideHome ?? FALLBACK_SANDBOX_HOME;

  const [system, masks, resolvConf, identity, extraReadOnly, groups, hard] = await Promise.all([
    systemEntries(),
    etcMasks(),
    resolvConfTarget(),
    hostGitIdentity(hostEnv),
    Promise.all((opts.readOnlyPaths ?? []).map((p) => realpath(p).catch(() => p))),
    detectCommandGroups(hostEnv),
    hostHardLimits(),
  ]);
  // Off the start-up path; awaited by dispose so nothing outlives the sandbox.
  const swept = groups.sweep().catch(() => 0);
  const env = buildSandboxEnv({
    source: hostEnv,
    allow: opts.envAllow,
    home,
    user: os.userInfo().username,
    extra: { TMPDIR: '/tmp', HEARTH_SANDBOXED: 'bwrap', ...identity.variables },
  });
  const shell = findShell('/usr/local/bin:/usr/bin:/bin');
  const prlimit = findExecutable('prlimit', '/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin');
  const limits = planLimits(opts, groups.heldBy, {
    root: process.getuid?.() === 0,
    tmpfsSize: tool.supportsSize,
    hard,
  });
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'hearth-bwrap-'));
  const gitconfigText = identityGitconfig(identity);
  const gitconfig = gitconfigText === undefined ? undefined : path.join(scratch, 'gitconfig');
  if (gitconfig !== undefined) await writeFile(gitconfig, gitconfigText!, { mode: 0o600 });
  let proxy: DomainProxy | undefined;
  if (!opts.network && opts.allowDomains?.length) {
    await mkdir(path.join(scratch, 'net'), { mode: 0o700 });
    proxy = await startDomainProxy({
      socketPath: path.join(scratch, 'net', 'proxy.sock'),
      domains: opts.allowDomains,
      policy: { allow: opts.privateAllow ?? [] },
    });
    // The bridge inside runs on the Node.js running Hearth, wherever that is installed.
    extraReadOnly.push(process.execPath);
  }

  let disableUserns = tool.supportsDisableUserns;
  const launch = async (
    io: ExecRequest,
    cwd: string,
    protect: ProtectedLayout,
    group: CommandGroup | null,
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
      protect,
      disableUserns,
      tmpBytes: limits.tmpBytes,
      gitconfig,
      inner: limitedArgv(
        [shell, '-c', proxyPrefix(proxy) + io.command],
        limits.rlimits(io.timeoutMs),
        prlimit,
      ),
      ...(proxy ? { proxyDir: path.dirname(proxy.socketPath) } : {}),
      ...(opts.linkedRepo ? { linkedRepo: opts.linkedRepo } : {}),
    });
    const tree = new SandboxTree();
    // `exec` makes bwrap the process-group leader runProcess kills on timeout; the group is
    // joined first so that everything bwrap starts is counted in it.
    const argv = [tool.path, ...args];
    const result = await runProcess({
      ...processIo(io),
      command: group ? group.wrap(argv) : `exec ${shellJoin(argv)}`,
      cwd,
      env,
      commandExit: (pid, stop) => tree.commandExit(pid, stop),
      clock: opts.clock,
    });
    await tree.gone(TREE_GONE_WAIT_MS);
    return result;
  };

  const noProtection: ProtectedLayout = { pinned: [], readOnly: [], existing: [] };
  const probe = (): Promise<ProcessResult> =>
    launch({ command: 'true', cwd: workspace, timeoutMs: 15_000 }, workspace, noProtection, null);
  let trial = await probe();
  if (trial.exitCode !== 0 && disableUserns) {
    // Some kernels refuse the sysctl behind --disable-userns; the rest of the sandbox still holds.
    disableUserns = false;
    trial = await probe();
  }
  if (trial.exitCode !== 0) {
    await rm(scratch, { recursive: true, force: true });
    const why = firstLine(trial.output) || (trial.timedOut ? 'timed out' : `exit code ${trial.exitCode}`);
    throw new SandboxError(`bwrap is installed but cannot run here: ${why}`);
  }

  return {
    kind: 'bwrap',
    description:
      `bwrap (${tool.version}): ${workspace} read-write, system read-only, ` +
      `${hideHome === null ? 'home inside the workspace' : 'home hidden'}, ` +
      `network ${opts.network ? 'on' : proxy ? `only ${opts.allowDomains!.join(', ')}` : 'off'}`,
    ...(opts.linkedRepo ? { linkedRepo: opts.linkedRepo } : {}),
    safeguards: bwrapSafeguards(limits, {
      network: opts.network,
      domains: proxy ? opts.allowDomains : undefined,
      disableUserns,
      hideHome,
      groupBy: groups.heldBy.pids,
    }),
    async exec(req) {
      const cwd = await resolveCwd(workspace, req.cwd);
      return withProtection(workspace, async (protect) => {
        const group = await groups.open(limits.cgroup);
        return inGroup(group, limits.cgroup.maxProcesses, (g) => launch(req, cwd, protect, g));
      });
    },
    async dispose() {
      // Every command ran in its own namespaces, which died with it; only the identity file is left.
      await proxy?.close();
      await rm(scratch, { recursive: true, force: true });
      await swept;
    },
  };
}

function bwrapSafeguards(
  limits: LimitPlan,
  o: {
    network: boolean;
    domains?: string[];
    disableUserns: boolean;
    hideHome: string | null;
    groupBy?: string;
  },
): Safeguard[] {
  return [
    {
      name: 'filesystem',
      active: true,
      detail: `only the workspace is writable; the system is read-only; ${o.hideHome === null ? 'the home is inside the workspace' : 'the home is hidden'}`,
    },
    {
      name: 'network',
      active: true,
      detail: o.network
        ? 'on (sandbox.network)'
        : o.domains
          ? `only ${o.domains.join(', ')}, through Hearth's proxy (public addresses only)`
          : 'none, not even loopback',
    },
    {
      name: 'protected files',
      active: true,
      detail:
        '.hearth, git hooks and config, shell start-up files: read-only when present, undone when a command creates them; a hard link to one stops commands',
    },
    {
      name: 'process tree',
      active: true,
      detail: `killed when the command ends or times out (PID namespace${o.groupBy ? `, and its ${o.groupBy}` : ''}); interpreters still running are stopped when their session ends`,
    },
    {
      name: 'user namespaces',
      active: o.disableUserns,
      detail: o.disableUserns
        ? 'none inside (--disable-userns); capabilities dropped'
        : 'this kernel or bubblewrap cannot forbid nested user namespaces; capabilities are still dropped',
    },
    ...limits.safeguards,
  ];
}

/** Where the bridge says it is listening; /tmp is private to each command. */
const BRIDGE_READY = '/tmp/.hearth-proxy-ready';

/**
 * Starts the bridge to the domain proxy in the background, waits (up to 5 s) for it to listen, and
 * points the usual proxy variables at it. One line, so that the command keeps its line numbers.
 */
function proxyPrefix(proxy: DomainProxy | undefined): string {
  if (!proxy) return '';
  const url = `http://127.0.0.1:${BRIDGE_PORT}`;
  const bridge = shellJoin([
    process.execPath,
    '-e',
    BRIDGE_SCRIPT,
    proxy.socketPath,
    String(BRIDGE_PORT),
    BRIDGE_READY,
  ]);
  return (
    `${bridge} </dev/null >/dev/null 2>&1 & ` +
    `__h=0; while [ ! -e ${BRIDGE_READY} ] && [ $__h -lt 250 ]; do sleep 0.02; __h=$((__h+1)); done; unset __h; ` +
    `export HTTP_PROXY=${url} HTTPS_PROXY=${url} http_proxy=${url} https_proxy=${url}; unset NO_PROXY no_proxy; `
  );
}
