/**
 * `--worktree [NAME]`: a git worktree on a new branch `hearth/NAME`, beside the main checkout at
 * `<parent>/<checkout>-NAME` (what `git worktree add ../repo-NAME` users do), recorded as Hearth's
 * so its sessions' git may commit on its branch (registry.ts, sandbox/linked-repo.ts).
 */
import { randomBytes } from 'node:crypto';
import { lstat, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { WORKTREE_BRANCH_PREFIX } from '../sandbox/linked-repo.js';
import { hostGit } from './host-git.js';
import { prepareLink, recordedWorktree, recordWorktree, type Worktree } from './registry.js';

export type Created = { ok: true; worktree: Worktree; reused: boolean } | { ok: false; error: string };

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** A generated name: `task-` and six hex digits. */
export function newWorktreeName(prefix = 'task'): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`;
}

/**
 * Makes the worktree `name` (generated when absent) of the repository at `from`, or takes the one
 * Hearth already made under that name (a second session in it). Errors are for the user.
 */
export async function createWorktree(
  from: string,
  opts: { home: string; name?: string; env?: NodeJS.ProcessEnv },
): Promise<Created> {
  const name = opts.name ?? newWorktreeName();
  if (!NAME.test(name) || name.endsWith('.lock') || name.includes('..'))
    return {
      ok: false,
      error: `"${name}" is not a usable worktree name: use letters, digits, ".", "_" and "-" (at most 63).`,
    };
  const top = await hostGit(from, ['rev-parse', '--show-toplevel'], opts.env);
  if (!top.ok)
    return {
      ok: false,
      error: `${from} is not in a git repository: --worktree makes a git worktree, so it needs one (\`git init\` and a first commit).`,
    };
  const head = await hostGit(from, ['rev-parse', '--verify', '-q', 'HEAD^{commit}'], opts.env);
  if (!head.ok)
    return {
      ok: false,
      error: 'The repository has no commit yet; --worktree branches from one. Commit first.',
    };
  const checkout = await realpath(top.stdout.trim());
  const common = await hostGit(
    checkout,
    ['rev-parse', '--path-format=absolute', '--git-common-dir'],
    opts.env,
  );
  const commonDir = await realpath(common.stdout.trim());
  // From inside a worktree, beside the main checkout all the same.
  const mainCheckout = path.basename(commonDir) === '.git' ? path.dirname(commonDir) : checkout;
  const target = path.join(path.dirname(mainCheckout), `${path.basename(mainCheckout)}-${name}`);
  const branch = `${WORKTREE_BRANCH_PREFIX}${name}`;

  const earlier = await recordedWorktree(opts.home, target);
  if (earlier && (await lstat(path.join(target, '.git')).catch(() => undefined)))
    return { ok: true, worktree: earlier, reused: true };
  if (await lstat(target).catch(() => undefined))
    return { ok: false, error: `${target} already exists and is not a Hearth worktree; pick another name.` };
  const exists = await hostGit(
    mainCheckout,
    ['rev-parse', '--verify', '-q', `refs/heads/${branch}`],
    opts.env,
  );
  if (exists.ok)
    return {
      ok: false,
      error: `The branch ${branch} exists already; pick another name, or remove it (\`git branch -D ${branch}\`).`,
    };
  const base = head.stdout.trim();
  const added = await hostGit(mainCheckout, ['worktree', 'add', '-q', '-b', branch, target, base], opts.env);
  if (!added.ok) return { ok: false, error: `git worktree add failed: ${added.stderr.trim()}` };
  const real = await realpath(target);
  const gitDir = await gitDirOf(real);
  if (gitDir === undefined) return { ok: false, error: `git worktree add left no .git file in ${real}.` };
  const worktree: Worktree = { name, path: real, branch, mainCheckout, base, gitDir, commonDir };
  await prepareLink(worktree);
  await recordWorktree(opts.home, worktree);
  return { ok: true, worktree, reused: false };
}

async function gitDirOf(dir: string): Promise<string | undefined> {
  const text = await readFile(path.join(dir, '.git'), 'utf8').catch(() => '');
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  return m ? realpath(path.resolve(dir, m[1]!)).catch(() => undefined) : undefined;
}
