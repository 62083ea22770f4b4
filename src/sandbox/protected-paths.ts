import type { Dirent } from 'node:fs';
import { lstat, mkdir, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { runHostCommand } from './host-command.js';
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

/** Per git directory (the repository's own and those of its submodules). */
const GIT_DIR_PROTECTED = ['hooks', 'config', 'config.worktree'];

const MAX_MODULE_DEPTH = 6;
const MAX_MODULES = 200;

export interface ProtectedLayout {
  /**
   * Directories bound over themselves, still writable. A mount point cannot be renamed or removed,
   * so `mv .git elsewhere && cp -r elsewhere .git` cannot carry the read-only paths away.
   */
  pinned: string[];
  /** Existing real paths inside the workspace, to be made read-only. */
  readOnly: string[];
}

/**
 * Works out what to protect in a workspace (a real path), right before a command runs, so that files
 * created since the last command are covered too. Creates `.hearth/` and `.git/hooks/` (and a
 * configured core.hooksPath inside the workspace) when missing: a path that does not exist cannot be
 * made read-only, and an empty directory is harmless to git and to us. They are never removed again,
 * since removing a directory on the host detaches the mount of any sandbox using it at that moment.
 *
 * Symlinked entries are followed when they stay inside the workspace and skipped when they leave it:
 * binding a link that points at ~/.ssh over itself would mount the user's keys inside the sandbox.
 * One race remains: a command already running in the same workspace, started before a start-up file
 * existed (so not protecting it), could swap that file for such a link between this check and the
 * mount. It takes two commands at once in one workspace and a won race of milliseconds.
 */
export async function protectWorkspace(workspace: string): Promise<ProtectedLayout> {
  const pinned: string[] = [];
  const candidates: string[] = PROTECTED_FILES.map((f) => path.join(workspace, f));

  const hearthDir = path.join(workspace, '.hearth');
  await ensureDir(hearthDir);
  candidates.push(hearthDir);

  const gitDir = path.join(workspace, '.git');
  if (await isRealDir(gitDir)) {
    for (const dir of [gitDir, ...(await submoduleGitDirs(path.join(gitDir, 'modules')))]) {
      pinned.push(dir);
      await ensureDir(path.join(dir, 'hooks'));
      for (const name of GIT_DIR_PROTECTED) candidates.push(path.join(dir, name));
    }
    const hooksPath = await configuredHooksPath(workspace, path.join(gitDir, 'config'));
    if (hooksPath !== null && isWithin(workspace, hooksPath) && hooksPath !== workspace) {
      await ensureDir(hooksPath);
      candidates.push(hooksPath);
    }
  }

  const readOnly = new Set<string>();
  for (const candidate of candidates) {
    const real = await realInside(workspace, candidate);
    if (real !== null && real !== workspace) readOnly.add(real);
  }
  return { pinned: pinned.sort(byDepth), readOnly: [...readOnly].sort(byDepth) };
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

async function isRealDir(p: string): Promise<boolean> {
  try {
    return (await lstat(p)).isDirectory();
  } catch {
    return false;
  }
}

async function ensureDir(p: string): Promise<void> {
  try {
    await lstat(p);
  } catch {
    await mkdir(p, { recursive: true }).catch(() => undefined);
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
  const r = await runHostCommand(
    'git',
    ['config', '--file', configFile, '--type=path', '--get', 'core.hooksPath'],
    {
      timeoutMs: 3000,
    },
  );
  const value = r.stdout.trim();
  if (!r.ok || value === '') return null;
  return path.resolve(workspace, value);
}
