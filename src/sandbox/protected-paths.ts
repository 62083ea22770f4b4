import type { Dirent, Stats } from 'node:fs';
import { lstat, readdir, realpath, rm } from 'node:fs/promises';
import path from 'node:path';
import { cleanNewGitConfig, stripHooks } from './git-dir-cleanup.js';
import { runHostCommand } from './host-command.js';
import type { ProcessResult } from './process.js';
import { locateRepository } from './repo-location.js';
import { SandboxError } from './types.js';
import { isWithin } from './workspace.js';

/**
 * Workspace paths that run code outside the sandbox later: the agent's own config (which decides
 * the sandbox and the permissions), git hooks and config (hooks, core.fsmonitor, aliases, filters),
 * and shell start-up files for when the workspace is someone's home. Writable, any of them would let
 * a sandboxed command plant code that runs unsandboxed at the next `git commit` or login.
 */
export const PROTECTED_FILES: readonly string[] = [
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.profile',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  '.zlogin',
  '.envrc',
];

const MAX_MODULE_DEPTH = 6;
const MAX_MODULES = 200;
/** Files looked at for extra hard links under a protected directory (.hearth, hooks). */
const MAX_LINK_CHECKS = 500;

/*
 * How the names are protected, whether they exist or not (the design, in one place):
 *
 * - Before a command, what exists is bound read-only into the sandbox (bwrap, containers) and the git
 *   directories are pinned (bound over themselves, so they cannot be moved away with the read-only
 *   paths inside them). Nothing is created in the workspace for this: a name that does not exist
 *   cannot be bound, and bubblewrap would create the mount point on the host.
 * - After the command, once its whole process tree is gone, every protected name that did not exist
 *   before is undone: start-up files, .hearth and a hooks directory named by core.hooksPath are
 *   removed; a new git directory keeps its repository but loses its hooks (samples stay) and every
 *   setting that runs a program (git-code-keys.ts); a new `.git` that is a file or link is removed,
 *   since it would send the user's git to a repository chosen by the sandbox. The model is told.
 *   Checking afterwards rather than mounting something over absent names keeps the workspace free of
 *   placeholder files (which `git status` would list and `git add -A` would trip on). The cost: a
 *   protected name the user creates on the host while a command runs is taken for the command's.
 * - A protected file with more than one hard link is refused before the command: the other name
 *   would stay writable behind the read-only mount. Hearth does not break the link itself, because
 *   the other name may be the user's (dotfiles kept by hard links); the message says how.
 *
 * Symlinked names are followed when they stay inside the workspace and skipped when they leave it:
 * binding a link that points at ~/.ssh over itself would mount the user's keys inside the sandbox.
 */

type NameKind = 'file' | 'dir' | 'git-config' | 'git-hooks' | 'dot-git';

interface ProtectedName {
  path: string;
  kind: NameKind;
}

export interface ProtectedLayout {
  /** Directories bound over themselves, still writable, so they cannot be renamed or removed. */
  pinned: string[];
  /** Existing real paths inside the workspace, to be made read-only. */
  readOnly: string[];
  /** The protected names that existed before the command (absolute, not resolved). */
  existing: string[];
}

/**
 * Works out what to protect in a workspace (a real path), right before a command runs. Throws a
 * SandboxError when a protected file has other hard links: the command must not run then.
 */
export async function protectWorkspace(workspace: string): Promise<ProtectedLayout> {
  const { names, pinned } = await protectedNames(workspace);
  const existing: string[] = [];
  const readOnly = new Set<string>();
  for (const name of names) {
    const st = await lstat(name.path).catch(() => undefined);
    if (st === undefined) continue;
    existing.push(name.path);
    if (name.kind === 'dot-git') {
      // A `.git` file names the repository the user's git will use; a directory is pinned instead.
      if (st.isFile()) readOnly.add(name.path);
      continue;
    }
    const real = await realInside(workspace, name.path);
    if (real === null || real === workspace) continue;
    readOnly.add(real);
    await refuseHardLinks(workspace, real);
  }
  return { pinned: pinned.sort(byDepth), readOnly: [...readOnly].sort(byDepth), existing };
}

/**
 * Undoes what a finished command did to protected names that did not exist before it; returns a
 * line for the model per change. Call only once the command's processes are all gone.
 */
export async function afterCommand(workspace: string, before: ProtectedLayout): Promise<string[]> {
  const existed = new Set(before.existing);
  const notices: string[] = [];
  const dotGit = path.join(workspace, '.git');
  if (!existed.has(dotGit)) {
    const st = await lstat(dotGit).catch(() => undefined);
    if (st && !st.isDirectory()) {
      await rm(dotGit, { force: true });
      notices.push(
        'Removed .git: this command made it a file or link to another repository, which the ' +
          "user's own git would then use. Create a repository with `git init` inside the workspace instead.",
      );
    }
  }
  const { names } = await protectedNames(workspace);
  for (const name of names) {
    if (existed.has(name.path)) continue;
    const st = await lstat(name.path).catch(() => undefined);
    if (st === undefined) continue;
    const shown = path.relative(workspace, name.path);
    const notice = await undo(workspace, name, st, shown);
    if (notice) notices.push(notice);
  }
  return notices;
}

async function undo(
  workspace: string,
  name: ProtectedName,
  st: Stats,
  shown: string,
): Promise<string | undefined> {
  switch (name.kind) {
    case 'dot-git':
      return undefined;
    case 'git-config': {
      if (!st.isFile()) {
        await rm(name.path, { recursive: true, force: true });
        return `Removed ${shown}: it was not a regular file.`;
      }
      const removed = await cleanNewGitConfig(name.path, workspace);
      return removed.length === 0
        ? undefined
        : `This command created ${shown}; removed its settings that run programs (${removed.join(', ')}) so that the user's own git does not run them.`;
    }
    case 'git-hooks': {
      const removed = st.isDirectory() ? await stripHooks(name.path) : [shown];
      if (!st.isDirectory()) await rm(name.path, { force: true });
      return removed.length === 0
        ? undefined
        : `This command created git hooks; removed ${removed.join(', ')} so that the user's own git does not run them. Hooks cannot be installed from the sandbox.`;
    }
    default:
      await rm(name.path, { recursive: true, force: true });
      return `Removed ${shown}: it runs outside the sandbox (${purpose(shown)}), so commands may not create it. Ask the user to create it if it is needed.`;
  }
}

function purpose(shown: string): string {
  if (shown === '.hearth') return "Hearth's own settings";
  if (PROTECTED_FILES.includes(shown)) return 'a shell start-up file';
  return 'git hooks';
}

/** Every protected name of the workspace as things stand, with the git directories to pin. */
async function protectedNames(workspace: string): Promise<{ names: ProtectedName[]; pinned: string[] }> {
  const names: ProtectedName[] = PROTECTED_FILES.map((f) => ({
    path: path.join(workspace, f),
    kind: 'file',
  }));
  names.push({ path: path.join(workspace, '.hearth'), kind: 'dir' });
  names.push({ path: path.join(workspace, '.git'), kind: 'dot-git' });
  const pinned: string[] = [];
  for (const gitDir of await gitDirsInside(workspace)) {
    pinned.push(gitDir);
    names.push({ path: path.join(gitDir, 'hooks'), kind: 'git-hooks' });
    names.push({ path: path.join(gitDir, 'config'), kind: 'git-config' });
    names.push({ path: path.join(gitDir, 'config.worktree'), kind: 'git-config' });
  }
  // A linked worktree's hooks path comes from its main repository's config, outside the workspace,
  // and a relative one names a directory in this work tree.
  const common = pinned[0] ?? (await locateRepository(workspace)).commonDir;
  if (common !== undefined) {
    const hooksPath = await configuredHooksPath(workspace, path.join(common, 'config'));
    if (hooksPath !== null && isWithin(workspace, hooksPath) && hooksPath !== workspace) {
      names.push({ path: hooksPath, kind: 'dir' });
    }
  }
  return { names, pinned };
}

/**
 * The repository's git directories that lie inside the workspace: its common directory first, then
 * its own when that differs (a linked work tree), then its submodules' under `<common>/modules`.
 */
async function gitDirsInside(workspace: string): Promise<string[]> {
  const repo = await locateRepository(workspace);
  const dirs = [repo.commonDir, repo.gitDir].filter(
    (d, i, all): d is string => d !== undefined && isWithin(workspace, d) && all.indexOf(d) === i,
  );
  if (dirs.length > 0) dirs.push(...(await submoduleGitDirs(path.join(dirs[0]!, 'modules'))));
  return dirs;
}

/** Throws when a protected file, or a file in a protected directory, has more than one name. */
async function refuseHardLinks(workspace: string, real: string): Promise<void> {
  let visited = 0;
  const find = async (p: string, depth: number): Promise<string | undefined> => {
    if (++visited > MAX_LINK_CHECKS) return undefined;
    const st = await lstat(p).catch(() => undefined);
    if (st?.isFile() && st.nlink > 1) return p;
    if (!st?.isDirectory() || depth > 3) return undefined;
    for (const entry of await readdir(p).catch(() => [] as string[])) {
      const found = await find(path.join(p, entry), depth + 1);
      if (found) return found;
    }
    return undefined;
  };
  const linked = await find(real, 0);
  if (linked === undefined) return;
  const shown = path.relative(workspace, linked);
  throw new SandboxError(
    `Refusing to run commands: the protected file ${shown} has another hard link, through which a ` +
      'command could change it behind its read-only protection. Ask the user to find the other name ' +
      `(\`find . -samefile ${shown}\`) and remove it, or to replace the file by a copy of itself ` +
      `(\`cp ${shown} ${shown}.tmp && mv ${shown}.tmp ${shown}\`).`,
  );
}

function byDepth(a: string, b: string): number {
  return a.split(path.sep).length - b.split(path.sep).length || a.localeCompare(b);
}

async function realInside(workspace: string, p: string): Promise<string | null> {
  try {
    await lstat(p);
    const real = await realpath(p);
    return isWithin(workspace, real) ? real : null;
  } catch {
    return null;
  }
}

/** Git directories of submodules, which live under .git/modules/<name...>/ and have their own hooks. */
async function submoduleGitDirs(modulesDir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > MAX_MODULE_DEPTH || found.length >= MAX_MODULES) return;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      const child = path.join(dir, entry.name);
      if (await exists(path.join(child, 'HEAD'))) {
        found.push(child);
        await walk(path.join(child, 'modules'), depth + 1);
      } else {
        // Submodule names may contain slashes, which nest their git directories.
        await walk(child, depth + 1);
      }
    }
  };
  await walk(modulesDir, 0);
  return found;
}

async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch {
    return false;
  }
}

/** core.hooksPath from the repository's config (husky and friends keep hooks in the worktree). */
async function configuredHooksPath(workspace: string, configFile: string): Promise<string | null> {
  // `--file` reads that one file and follows no include: nothing the repository says runs here.
  const r = await runHostCommand(
    'git',
    ['config', '--file', configFile, '--type=path', '--get', 'core.hooksPath'],
    { timeoutMs: 3000 },
  );
  const value = r.stdout.trim();
  if (!r.ok || value === '') return null;
  return path.resolve(workspace, value);
}

/**
 * Runs one command between the protection of the workspace before it and the clean-up after it;
 * `run` must return only once the command's processes are gone. The notices join the result.
 */
export async function withProtection(
  workspace: string,
  run: (layout: ProtectedLayout) => Promise<ProcessResult>,
): Promise<ProcessResult> {
  const layout = await protectWorkspace(workspace);
  const result = await run(layout);
  const notices = await afterCommand(workspace, layout);
  return notices.length === 0 ? result : { ...result, notices: [...(result.notices ?? []), ...notices] };
}
