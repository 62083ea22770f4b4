import { createHash, randomUUID } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import os from 'node:os';
import { buildSandboxEnv, hostGitIdentity, identityGitconfig } from './env.js';
import { firstLine, runHostCommand, shellJoin } from './host-command.js';
import { DEFAULT_MAX_PROCESSES, DEFAULT_TMP_MB } from './limits.js';
import { type ProcessResult, processIo, runProcess } from './process.js';
import { type ProtectedLayout, protectWorkspace, withProtection } from './protected-paths.js';
import {
  type ExecRequest,
  type Safeguard,
  type Sandbox,
  SandboxError,
  type SandboxOptions,
} from './types.js';
import { realWorkspace, resolveCwd } from './workspace.js';

export type ContainerEngine = 'docker' | 'podman';

const DEFAULT_IMAGE = 'node:20-bookworm';
const DEFAULT_MEMORY_MB = 512;
const DEFAULT_CPUS = 1;
const CONTAINER_HOME = '/tmp/home';
/** Marks every process of one exec so that the stragglers can be found and killed afterwards. */
const EXEC_MARK = 'HEARTH_EXEC_ID';

export interface ContainerPlan {
  engine: ContainerEngine;
  name: string;
  image: string;
  workspace: string;
  network: boolean;
  memoryMb: number;
  cpus: number;
  maxProcesses: number;
  tmpMb: number;
  /** Host uid/gid, so files written in the workspace belong to the user. */
  uid: number;
  gid: number;
  protect: ProtectedLayout;
  extraReadOnly: string[];
}

/** One container per workspace, found again by name across sessions. */
export function containerName(workspace: string): string {
  return `hearth-${createHash('sha256').update(workspace).digest('hex').slice(0, 12)}`;
}

/**
 * Fingerprint of everything that shapes the container, stored as a label: a container created with
 * other settings (network on, another image) is replaced instead of silently reused.
 */
export function planFingerprint(plan: ContainerPlan): string {
  const { engine: _engine, name: _name, ...shape } = plan;
  return createHash('sha256').update(JSON.stringify(shape)).digest('hex').slice(0, 16);
}

/** `docker run` arguments for the long-lived container; commands then arrive through `exec`. */
export function buildContainerRunArgs(plan: ContainerPlan): string[] {
  const args = ['run', '--detach', '--name', plan.name, '--init'];
  args.push(
    '--label',
    `hearth.workspace=${plan.workspace}`,
    '--label',
    `hearth.plan=${planFingerprint(plan)}`,
  );
  args.push('--read-only', '--tmpfs', `/tmp:rw,exec,mode=1777,size=${plan.tmpMb}m`);
  args.push('--cap-drop', 'ALL', '--security-opt', 'no-new-privileges');
  args.push('--memory', `${plan.memoryMb}m`, '--cpus', String(plan.cpus));
  args.push('--pids-limit', String(plan.maxProcesses));
  if (!plan.network) args.push('--network', 'none');
  if (plan.engine === 'podman' && plan.uid !== 0) {
    // Rootless podman maps container root to the user; keep-id maps the user to itself instead.
    args.push('--userns', 'keep-id');
  } else {
    args.push('--user', `${plan.uid}:${plan.gid}`);
  }
  args.push('--volume', `${plan.workspace}:${plan.workspace}`);
  for (const p of plan.protect.pinned) args.push('--volume', `${p}:${p}`);
  for (const p of plan.protect.readOnly) args.push('--volume', `${p}:${p}:ro`);
  for (const p of plan.extraReadOnly) args.push('--volume', `${p}:${p}:ro`);
  args.push('--workdir', plan.workspace, plan.image, 'sleep', 'infinity');
  return args;
}

/**
 * `docker exec` arguments for one command. Values go on the command line rather than inherited,
 * because the engine's client needs the host's own environment (DOCKER_HOST, its config dir).
 * PATH is left to the image: the host's would name directories that do not exist in it.
 */
export function buildContainerExecArgs(input: {
  name: string;
  cwd: string;
  env: Record<string, string>;
  execId: string;
  command: string;
  /** Keep stdin open, for a process fed as it runs. */
  interactive?: boolean;
}): string[] {
  const args = ['exec', ...(input.interactive ? ['--interactive'] : []), '--workdir', input.cwd];
  for (const [key, value] of Object.entries(input.env)) {
    if (key !== 'PATH') args.push('--env', `${key}=${value}`);
  }
  args.push('--env', `${EXEC_MARK}=${input.execId}`, input.name);
  // Images without bash (alpine) still get a shell; HOME lives on the /tmp tmpfs and starts empty,
  // and gets the user's git identity (HEARTH_GITCONFIG) as its ~/.gitconfig.
  const launcher =
    'mkdir -p "$HOME" 2>/dev/null; if [ -n "$HEARTH_GITCONFIG" ] && [ ! -e "$HOME/.gitconfig" ]; then ' +
    'printf "%s" "$HEARTH_GITCONFIG" > "$HOME/.gitconfig"; fi; ' +
    'if command -v bash >/dev/null 2>&1; then exec bash -c "$1"; else exec sh -c "$1"; fi';
  args.push('sh', '-c', launcher, 'sh', input.command);
  return args;
}

/**
 * Kills what an exec left behind. Killing the engine's client does not stop the process inside the
 * container, so every process carrying this exec's mark in its environment is killed explicitly.
 */
export function buildContainerReapArgs(name: string, execId: string): string[] {
  const script = [
    `for p in /proc/[0-9]*; do`,
    `  if tr '\\0' '\\n' < "$p/environ" 2>/dev/null | grep -qx '${EXEC_MARK}=${execId}'; then`,
    `    kill -9 "\${p#/proc/}" 2>/dev/null;`,
    `  fi;`,
    `done; true`,
  ].join('\n');
  return ['exec', name, 'sh', '-c', script];
}

/** Whether the engine's CLI exists and its daemon (or podman's runtime) answers. */
export async function detectEngine(
  engine: ContainerEngine,
): Promise<{ ok: true; version: string } | { ok: false; reason: string }> {
  const r = await runHostCommand(engine, ['info', '--format', '{{json .}}'], { timeoutMs: 5000 });
  if (r.missing) return { ok: false, reason: `${engine} not installed` };
  if (!r.ok) {
    const detail = firstLine(r.stderr) || (r.code === null ? 'no answer within 5s' : `exit code ${r.code}`);
    return { ok: false, reason: `${engine} is installed but not running (${detail})` };
  }
  const version = await runHostCommand(engine, ['--version'], { timeoutMs: 5000 });
  return { ok: true, version: firstLine(version.stdout) || engine };
}

/**
 * A docker/podman sandbox for one workspace. The container is created on the first command and
 * reused by later ones and later sessions; it is left running on dispose because other sessions may
 * share it (`docker rm -f hearth-…` removes it).
 */
export async function createContainerSandbox(
  engine: ContainerEngine,
  opts: SandboxOptions,
): Promise<Sandbox> {
  const detected = await detectEngine(engine);
  if (!detected.ok) throw new SandboxError(detected.reason);
  const workspace = await realWorkspace(opts.workspace);
  const user = os.userInfo();
  const hostEnv = opts.hostEnv ?? process.env;
  const identity = await hostGitIdentity(hostEnv);
  const gitconfig = identityGitconfig(identity);
  const env = buildSandboxEnv({
    source: hostEnv,
    allow: opts.envAllow,
    home: CONTAINER_HOME,
    user: user.username,
    extra: {
      TMPDIR: '/tmp',
      HEARTH_SANDBOXED: engine,
      ...identity.variables,
      ...(gitconfig === undefined ? {} : { HEARTH_GITCONFIG: gitconfig }),
    },
  });
  const plan: ContainerPlan = {
    engine,
    name: containerName(workspace),
    image: opts.image ?? DEFAULT_IMAGE,
    workspace,
    network: opts.network,
    memoryMb: opts.memoryMb ?? DEFAULT_MEMORY_MB,
    cpus: opts.cpus ?? DEFAULT_CPUS,
    maxProcesses: opts.maxProcesses ?? DEFAULT_MAX_PROCESSES,
    tmpMb: opts.tmpMb ?? DEFAULT_TMP_MB,
    uid: user.uid,
    gid: user.gid,
    protect: await protectWorkspace(workspace),
    extraReadOnly: await Promise.all((opts.readOnlyPaths ?? []).map((p) => realpath(p).catch(() => p))),
  };

  let ready: Promise<void> | null = null;
  const ensure = (): Promise<void> => {
    ready ??= ensureContainer(plan).catch((err: unknown) => {
      ready = null;
      throw err;
    });
    return ready;
  };

  return {
    kind: engine,
    description:
      `${engine} (${detected.version}): container ${plan.name} from ${plan.image}, ${workspace} mounted, ` +
      `${plan.memoryMb} MB, ${plan.cpus} CPU, network ${opts.network ? 'on' : 'off'}`,
    safeguards: containerSafeguards(plan),
    async exec(req): Promise<ProcessResult> {
      const cwd = await resolveCwd(workspace, req.cwd);
      await ensure();
      return withProtection(workspace, () => runInContainer(req, cwd));
    },
    async dispose() {
      // The container outlives the session on purpose; see above.
    },
  };

  async function runInContainer(req: ExecRequest, cwd: string): Promise<ProcessResult> {
    const execId = randomUUID();
    const args = buildContainerExecArgs({
      name: plan.name,
      cwd,
      env,
      execId,
      command: req.command,
      interactive: req.stdin !== undefined,
    });
    try {
      const result = await runProcess({
        command: `exec ${shellJoin([engine, ...args])}`,
        cwd,
        ...processIo(req),
        clock: opts.clock,
      });
      // Someone removed or stopped the container since: check it again before the next command.
      if (
        result.exitCode !== null &&
        result.exitCode >= 125 &&
        /no such container|is not running/i.test(result.output)
      ) {
        ready = null;
      }
      return result;
    } finally {
      await runHostCommand(engine, buildContainerReapArgs(plan.name, execId), { timeoutMs: 10_000 });
    }
  }
}

async function ensureContainer(plan: ContainerPlan): Promise<void> {
  const { engine, name } = plan;
  const inspect = await runHostCommand(engine, [
    'inspect',
    '--format',
    '{{.State.Running}} {{index .Config.Labels "hearth.plan"}}',
    name,
  ]);
  if (inspect.ok) {
    const [running, fingerprint] = inspect.stdout.trim().split(' ');
    if (fingerprint === planFingerprint(plan)) {
      if (running === 'true') return;
      const started = await runHostCommand(engine, ['start', name], { timeoutMs: 30_000 });
      if (started.ok) return;
    }
    await runHostCommand(engine, ['rm', '--force', name], { timeoutMs: 30_000 });
  }
  // Pulling an image can take minutes on a slow line.
  const created = await runHostCommand(engine, buildContainerRunArgs(plan), { timeoutMs: 600_000 });
  if (!created.ok) {
    throw new SandboxError(
      `Could not start the ${engine} container ${name}: ${firstLine(created.stderr) || 'unknown error'}`,
    );
  }
}

function containerSafeguards(plan: ContainerPlan): Safeguard[] {
  const on = (name: string, detail: string): Safeguard => ({ name, active: true, detail });
  return [
    on('filesystem', 'only the workspace is mounted writable; the image is read-only'),
    on('network', plan.network ? 'on (sandbox.network)' : 'none'),
    on(
      'protected files',
      'read-only when present at container start; undone after each command that creates them; a hard link to one stops commands',
    ),
    on('process tree', 'every process of a command is killed when it ends'),
    on('memory', `${plan.memoryMb} MB for the container (cgroup)`),
    on('processes', `${plan.maxProcesses} (pids limit)`),
    on('cpus', String(plan.cpus)),
    on('temp space', `${plan.tmpMb} MB for /tmp (tmpfs)`),
  ];
}
