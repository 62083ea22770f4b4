import { hostGit } from './host-git.js';
import type { Worktree } from './registry.js';

/** Where a worktree's work stands: commits on its branch since its base, uncommitted files, a diff stat. */
export interface WorktreeState {
  branch: string;
  path: string;
  commits: number;
  /** Files changed in the work tree and not committed. */
  uncommitted: number;
  /** `git diff --stat` of the branch and the work tree against the base, last line (totals) first. */
  stat: string;
}

export async function worktreeState(w: Worktree, env?: NodeJS.ProcessEnv): Promise<WorktreeState> {
  const [log, status, stat] = await Promise.all([
    hostGit(w.mainCheckout, ['rev-list', '--count', `${w.base}..${w.branch}`], env),
    hostGit(w.path, ['status', '--porcelain'], env),
    hostGit(w.path, ['diff', '--stat=72', w.base], env),
  ]);
  return {
    branch: w.branch,
    path: w.path,
    commits: Number(log.stdout.trim()) || 0,
    uncommitted: status.stdout.split('\n').filter((l) => l.trim() !== '').length,
    stat: stat.stdout.trimEnd(),
  };
}

/** What to tell the user at the end of a session in a worktree: where it is, how to merge or remove it. */
export function worktreeAdvice(w: Worktree, s: WorktreeState): string[] {
  const lines = [
    `Worktree ${w.path} on branch ${w.branch}: ${s.commits} commit${s.commits === 1 ? '' : 's'}` +
      `${s.uncommitted > 0 ? `, ${s.uncommitted} uncommitted change${s.uncommitted === 1 ? '' : 's'}` : ''}.`,
  ];
  if (s.uncommitted > 0) lines.push(`  commit:  git -C ${w.path} add -A && git -C ${w.path} commit`);
  lines.push(`  merge:   git -C ${w.mainCheckout} merge ${w.branch}`);
  lines.push(
    `  remove:  git -C ${w.mainCheckout} worktree remove ${w.path} && git -C ${w.mainCheckout} branch -D ${w.branch}`,
  );
  return lines;
}
