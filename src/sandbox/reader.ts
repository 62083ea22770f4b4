import { realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildBwrapArgs, FALLBACK_SANDBOX_HOME, findBwrap } from './bwrap.js';
import { buildSandboxEnv } from './env.js';
import { firstLine, runHostCommand } from './host-command.js';
import { etcMasks, resolvConfTarget, systemEntries } from './host-layout.js';
import { isWithin, realWorkspace } from './workspace.js';

/**
 * A bubblewrap jail for long-running programs that only read the workspace: language servers
 * (src/lsp/). They run on the host's programs but read files the agent wrote, and the workspace's
 * own configuration can point them at plugins and executables, so they get: the workspace
 * read-only, the system read-only as commands see it (secrets under /etc masked), their own install
 * folders read-only, an empty home and /tmp, no network, and an environment without the user's
 * tokens. Unlike a command they talk over stdio for as long as they live, so this only builds the
 * argv; the caller spawns it. bwrap dies with its parent, and its PID namespace takes the program's
 * children with it.
 */

export interface ReaderJail {
  /** `bwrap (0.8.0): workspace read-only, no network`. */
  description: string;
  /**
   * The argv and environment that run `argv` (absolute program first) jailed, from `cwd`; `uses`
   * names other programs it runs (pyright runs the host's Python), made readable like it.
   */
  wrap(
    argv: string[],
    cwd: string,
    uses?: string[],
  ): Promise<{ argv: string[]; env: Record<string, string> }>;
}

/** Size of the jail's /tmp and home (a server's caches and logs live there while it runs). */
const TMP_BYTES = 256 * 1024 * 1024;

/**
 * The jail for `workspace`, or the reason it cannot be had here (not Linux, no bubblewrap, or
 * bubblewrap cannot make namespaces): the caller then runs the program unjailed and says so.
 */
export async function readerJail(
  workspace: string,
  hostEnv: NodeJS.ProcessEnv,
): Promise<ReaderJail | { unavailable: string }> {
  if (process.platform !== 'linux') return { unavailable: 'bubblewrap runs on Linux only' };
  let tool: Awaited<ReturnType<typeof findBwrap>>;
  let real: string;
  try {
    tool = await findBwrap(hostEnv.PATH);
    real = await realWorkspace(workspace);
  } catch (err) {
    return { unavailable: (err as Error).message };
  }
  const realHome = await realpath(os.homedir()).catch(() => os.homedir());
  const hideHome = realHome === '/' || isWithin(real, realHome) ? null : realHome;
  const home = hideHome ?? FALLBACK_SANDBOX_HOME;
  const [system, masks, resolvConf] = await Promise.all([systemEntries(), etcMasks(), resolvConfTarget()]);
  const env = buildSandboxEnv({
    source: hostEnv,
    allow: [],
    home,
    user: os.userInfo().username,
    extra: { TMPDIR: '/tmp', HEARTH_SANDBOXED: 'bwrap' },
  });
  let disableUserns = tool.supportsDisableUserns;
  const args = (inner: string[], cwd: string, readable: string[]) =>
    buildBwrapArgs({
      workspace: real,
      workspaceReadOnly: true,
      cwd,
      home,
      hideHome,
      network: false,
      system,
      etcMasks: masks,
      resolvConf,
      extraReadOnly: readable,
      protect: { pinned: [], readOnly: [], existing: [] },
      disableUserns,
      ...(tool.supportsSize ? { tmpBytes: TMP_BYTES } : {}),
      inner,
    });
  const probe = () => runHostCommand(tool.path, args(['true'], real, []), { env, timeoutMs: 15_000 });
  let trial = await probe();
  if (!trial.ok && disableUserns) {
    // Some kernels refuse the sysctl behind --disable-userns; the rest of the jail still holds.
    disableUserns = false;
    trial = await probe();
  }
  if (!trial.ok)
    return { unavailable: `bwrap cannot run here: ${firstLine(trial.stderr) || `exit code ${trial.code}`}` };
  return {
    description: `${tool.version}: workspace read-only, no network`,
    async wrap(argv, cwd, uses = []) {
      const [program, ...rest] = argv;
      const [real, ...others] = await Promise.all([program!, ...uses].map((p) => realpath(p).catch(() => p)));
      const readable = [...new Set([real!, ...uses, ...others].flatMap((p) => installDirs(p, hideHome)))];
      return { argv: [tool.path, ...args([real!, ...rest], cwd, readable)], env };
    },
  };
}

/**
 * What a program needs to read beside the system: the node_modules folder it is installed in (its
 * dependencies: typescript for typescript-language-server), else its own folder; when it lives in
 * the hidden home, the tool folder there that holds it (~/.cargo, ~/go, ~/.pyenv); and the Node.js
 * running Hearth, which a server's `#!/usr/bin/env node` may need when it is not a system one.
 */
function installDirs(program: string, hideHome: string | null): string[] {
  const parts = program.split(path.sep);
  const modules = parts.lastIndexOf('node_modules');
  const own = modules > 0 ? parts.slice(0, modules + 1).join(path.sep) : path.dirname(program);
  const dirs = [own, path.dirname(path.dirname(process.execPath))];
  if (hideHome !== null) {
    for (const dir of [...dirs]) {
      const rel = path.relative(hideHome, dir);
      if (rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel))
        dirs.push(path.join(hideHome, rel.split(path.sep)[0]!));
    }
  }
  return [...new Set(dirs)].filter((dir) => dir !== '/' && dir !== '/usr');
}
