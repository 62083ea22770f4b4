/**
 * A sub-agent in a git worktree of its own (`worktree: true` on a spawn tool, or
 * `subagents.worktrees`): its own branch `hearth/agent-…` beside the main checkout, its own sandbox
 * over it, so children working side by side can edit the same file without clobbering each other.
 * At its end whatever it left uncommitted is committed on its branch (in its sandbox, like the git
 * tools), and the parent gets the branch, where it is and a diff stat, to merge.
 */
import { sandboxOptions } from '../agent/runtime.js';
import type { Config } from '../config/schema.js';
import type { PermissionGate } from '../permissions/gate.js';
import { createSandbox } from '../sandbox/select.js';
import type { Sandbox } from '../sandbox/types.js';
import { createGitRunner } from '../tools/git/run-git.js';
import { SessionScratch } from '../tools/scratch.js';
import { MemoryState } from '../tools/types.js';
import { createWorktree, newWorktreeName } from '../worktrees/create.js';
import type { Worktree } from '../worktrees/registry.js';
import { worktreeState } from '../worktrees/summary.js';
import type { SubagentResult } from './types.js';

export interface ChildWorktree {
  worktree: Worktree;
  sandbox: Sandbox;
  gate: PermissionGate;
  /** Commits what is left, adds the branch to the result, and lets the sandbox go. */
  finish(result: SubagentResult, objective: string): Promise<SubagentResult>;
}

export async function openChildWorktree(o: {
  workspace: string;
  home: string;
  config: Config;
  gate: PermissionGate;
}): Promise<{ ok: true; child: ChildWorktree } | { ok: false; error: string }> {
  const made = await createWorktree(o.workspace, { home: o.home, name: newWorktreeName('agent') });
  if (!made.ok) return made;
  const worktree = made.worktree;
  const link = { gitDir: worktree.gitDir, commonDir: worktree.commonDir };
  const choice = await createSandbox(o.config.sandbox.mode, sandboxOptions(o.config, worktree.path, link));
  const sandbox = choice.sandbox;
  return {
    ok: true,
    child: {
      worktree,
      sandbox,
      gate: o.gate.forWorkspace(worktree.path),
      async finish(result, objective) {
        try {
          const note = await commitLeftovers(worktree.path, sandbox, objective);
          const state = await worktreeState(worktree);
          return {
            ...result,
            ...(note ? { notes: [result.notes, note].filter(Boolean).join(' ') } : {}),
            worktree: {
              branch: worktree.branch,
              path: worktree.path,
              commits: state.commits,
              stat: state.stat,
            },
          };
        } finally {
          await sandbox.dispose();
        }
      },
    },
  };
}

/** Commits the child's uncommitted work on its branch; a line for the parent when that failed. */
async function commitLeftovers(
  workspace: string,
  sandbox: Sandbox,
  objective: string,
): Promise<string | undefined> {
  const git = createGitRunner();
  const ctx = {
    workspace,
    sandbox,
    signal: new AbortController().signal,
    scratch: new SessionScratch(),
    durable: new MemoryState(),
    progress: () => {},
  };
  const status = await git.run(ctx, ['status', '--porcelain']);
  if (status.exitCode !== 0 || status.stdout.trim() === '') return undefined;
  const added = await git.run(ctx, ['add', '-A']);
  const subject = `sub-agent: ${objective.replace(/\s+/g, ' ').trim()}`.slice(0, 100);
  const committed = added.exitCode === 0 ? await git.run(ctx, ['commit', '-q', '-m', subject]) : added;
  return committed.exitCode === 0
    ? undefined
    : `Its uncommitted work could not be committed on its branch: ${(committed.stderr || committed.stdout).trim().slice(0, 300)}`;
}
