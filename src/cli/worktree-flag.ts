/**
 * `--worktree [NAME]` of the main command: the session runs in a git worktree of its own on the
 * branch `hearth/NAME` beside the main checkout (worktrees/create.ts); the user is told where it is
 * at the start, and at the end what it holds and how to merge or remove it. Resuming a session that
 * ran in one goes back into it, wherever Hearth is started from.
 */
import { resolve } from 'node:path';
import { hearthHome } from '../config/sources.js';
import { createWorktree } from '../worktrees/create.js';
import { recordedWorktree, type Worktree } from '../worktrees/registry.js';
import { worktreeAdvice, worktreeState } from '../worktrees/summary.js';
import { visible } from './sanitize.js';
import { UsageError } from './usage-error.js';

/** Makes (or takes again) the worktree the flag asks for; errors are the user's. */
export async function enterWorktree(workspace: string, flag: string | true): Promise<Worktree> {
  if (flag !== true && /\s/.test(flag))
    throw new UsageError(
      `--worktree takes an optional NAME, not the task ("${flag}"): hearth --worktree NAME "task", or hearth "task" --worktree`,
    );
  const made = await createWorktree(resolve(workspace), {
    home: hearthHome(),
    ...(flag === true ? {} : { name: flag }),
  });
  if (!made.ok) throw new UsageError(made.error);
  const w = made.worktree;
  process.stderr.write(
    visible(
      `${made.reused ? 'Back in' : 'Made'} worktree ${w.path} on branch ${w.branch} (from ${w.mainCheckout}).\n`,
    ),
  );
  return w;
}

/** The worktree a stored session ran in, when Hearth made it: a resume goes back there. */
export function sessionWorktree(workspace: string): Promise<Worktree | undefined> {
  return recordedWorktree(hearthHome(), workspace);
}

/** The end of a session in a worktree: what it holds, and the commands to merge or remove it. */
export async function sayWorktreeEnd(w: Worktree): Promise<void> {
  const state = await worktreeState(w);
  const lines = worktreeAdvice(w, state);
  process.stderr.write(visible(`${lines.join('\n')}\n`));
}
