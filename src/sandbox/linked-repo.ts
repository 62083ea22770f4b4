import path from 'node:path';

/**
 * A repository outside the workspace that the workspace's `.git` file links to: a git worktree Hearth
 * created itself (worktrees/), whose git directory is `<common>/worktrees/NAME` of the main checkout.
 * The sandbox shows git only what a commit on the worktree's own branch needs, and nothing that runs
 * code later on the host (the main repository's hooks, config, info, the worktree's `commondir`):
 *
 * - the common directory read-only (config, hooks, info, HEAD, packed-refs, other worktrees);
 * - writable: the object store (without `objects/info`, where alternates live), the branch namespace
 *   Hearth's branches use (`refs/heads/hearth/` and its reflogs), and the worktree's own git
 *   directory (HEAD, index, logs) with its pointers (`commondir`, `gitdir`) and `config.worktree`
 *   bound read-only over it again (worktrees/ makes sure they exist, or a command could create one).
 *
 * Nothing here trusts the workspace: only a link Hearth recorded when it made the worktree is passed.
 */
export interface LinkedRepo {
  /** The worktree's git directory, a real path: `<common>/worktrees/NAME`. */
  gitDir: string;
  /** The main repository's git directory, a real path. */
  commonDir: string;
}

/** The branch namespace of Hearth's worktrees: `hearth/NAME`. */
export const WORKTREE_BRANCH_PREFIX = 'hearth/';

/** One mount; `try`: skipped when the path is absent. */
export interface LinkedRepoMount {
  path: string;
  writable: boolean;
  try: boolean;
}

/**
 * The mounts that give a sandbox's git the linked repository, in order (a later one covers earlier
 * ones). A linked worktree's config, hooks and info are the common directory's, so only the
 * worktree's pointers and its `config.worktree` need covering inside its own git directory.
 */
export function linkedRepoMounts(link: LinkedRepo): LinkedRepoMount[] {
  const branches = WORKTREE_BRANCH_PREFIX.replace(/\/$/, '');
  const common = (...p: string[]) => path.join(link.commonDir, ...p);
  const own = (...p: string[]) => path.join(link.gitDir, ...p);
  return [
    { path: link.commonDir, writable: false, try: false },
    { path: common('objects'), writable: true, try: false },
    { path: common('objects', 'info'), writable: false, try: true },
    { path: common('refs', 'heads', branches), writable: true, try: true },
    { path: common('logs', 'refs', 'heads', branches), writable: true, try: true },
    { path: link.gitDir, writable: true, try: false },
    ...['commondir', 'gitdir', 'config.worktree'].map((name) => ({
      path: own(name),
      writable: false,
      try: true,
    })),
  ];
}
