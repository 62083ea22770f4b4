import type { AnyTool } from '../types.js';
import { createGitAddTool } from './add.js';
import { createGitBranchTool } from './branch.js';
import { createGitCommitTool } from './commit.js';
import { createGitDiffTool } from './diff.js';
import { createGitLogTool } from './log.js';
import { createGitRunner, type GitRunnerOptions } from './run-git.js';
import { createGitStatusTool } from './status.js';

export type { GitRunnerOptions } from './run-git.js';

/** The git tools around one runner; options exist for tests and for a custom git binary. */
export function createGitTools(options: GitRunnerOptions = {}): AnyTool[] {
  const git = createGitRunner(options);
  return [
    createGitStatusTool(git),
    createGitDiffTool(git),
    createGitLogTool(git),
    createGitAddTool(git),
    createGitCommitTool(git),
    createGitBranchTool(git),
  ];
}

/** git_status, git_diff, git_log, git_add, git_commit, git_branch, running git in the session's sandbox. */
export const gitTools: AnyTool[] = createGitTools();
