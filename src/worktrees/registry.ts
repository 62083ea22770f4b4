/**
 * The worktrees Hearth made, one JSON file each under `<home>/worktrees/`, outside every workspace
 * and sandbox. A workspace is treated as a Hearth worktree (its git may reach the main repository,
 * sandbox/linked-repo.ts) only when recorded here and its `.git` file still leads where it did: a
 * `.git` file some other program (or a model) wrote grants nothing.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type LinkedRepo, WORKTREE_BRANCH_PREFIX } from '../sandbox/linked-repo.js';
import { locateRepository } from '../sandbox/repo-location.js';

export interface Worktree {
  /** The short name (`fix-login`); the branch is `hearth/<name>`. */
  name: string;
  /** The work tree, a real path. */
  path: string;
  branch: string;
  /** The main checkout it was made from, a real path. */
  mainCheckout: string;
  /** The commit it started from. */
  base: string;
  gitDir: string;
  commonDir: string;
}

const folder = (home: string) => path.join(home, 'worktrees');
const fileOf = (home: string, dir: string) =>
  path.join(folder(home), `${createHash('sha256').update(dir).digest('hex').slice(0, 32)}.json`);

export async function recordWorktree(home: string, worktree: Worktree): Promise<void> {
  await mkdir(folder(home), { recursive: true, mode: 0o700 });
  await writeFile(fileOf(home, worktree.path), `${JSON.stringify(worktree, null, 2)}\n`, { mode: 0o600 });
}

/** The recorded worktree at `dir` (any path to it), whether or not it still matches the disk. */
export async function recordedWorktree(home: string, dir: string): Promise<Worktree | undefined> {
  const real = await realpath(dir).catch(() => path.resolve(dir));
  const text = await readFile(fileOf(home, real), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const w = JSON.parse(text) as Worktree;
    return w.path === real && w.branch.startsWith(WORKTREE_BRANCH_PREFIX) ? w : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The main repository a Hearth worktree's git may reach, when `workspace` is one and its `.git`
 * file still leads to the git directory recorded for it. Makes sure the files the sandbox binds
 * read-only over the worktree's git directory exist (an absent one could be created from inside),
 * and the branch namespace's folders it binds writable.
 */
export async function trustedLink(home: string, workspace: string): Promise<LinkedRepo | undefined> {
  const w = await recordedWorktree(home, workspace);
  if (w === undefined) return undefined;
  const link: LinkedRepo = { gitDir: w.gitDir, commonDir: w.commonDir };
  const found = await locateRepository(w.path, link);
  if (found.dotGit !== 'file' || found.outside.length > 0 || found.gitDir !== w.gitDir) return undefined;
  await prepareLink(link);
  return link;
}

/** Creates what linked-repo.ts mounts and must exist before any command runs. */
export async function prepareLink(link: LinkedRepo): Promise<void> {
  const ns = WORKTREE_BRANCH_PREFIX.replace(/\/$/, '');
  await mkdir(path.join(link.commonDir, 'refs', 'heads', ns), { recursive: true });
  await mkdir(path.join(link.commonDir, 'logs', 'refs', 'heads', ns), { recursive: true });
  await writeFile(path.join(link.gitDir, 'config.worktree'), '', { flag: 'a' });
}
