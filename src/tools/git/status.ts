import { z } from 'zod';
import { defineTool } from '../types.js';
import type { GitRunner } from './run-git.js';
import { branchLine, formatGroup, readStatus } from './status-parse.js';

/** Entries listed per group; a repository with thousands of changes gets counts, not a flood. */
const STATUS_MAX_PER_GROUP = 50;

export function createGitStatusTool(git: GitRunner) {
  return defineTool({
    name: 'git_status',
    description: 'Branch and changed files.',
    parameters: z.object({}),
    mutates: false,
    async run(_args, ctx) {
      const s = await readStatus(git, ctx);
      const parts = [branchLine(s)];
      if (s.conflicts.length > 0) parts.push(formatGroup('Conflicts', s.conflicts, STATUS_MAX_PER_GROUP));
      if (s.staged.length > 0) parts.push(formatGroup('Staged', s.staged, STATUS_MAX_PER_GROUP));
      if (s.unstaged.length > 0) parts.push(formatGroup('Unstaged', s.unstaged, STATUS_MAX_PER_GROUP));
      if (s.untracked.length > 0) parts.push(formatGroup('Untracked', s.untracked, STATUS_MAX_PER_GROUP));
      if (parts.length === 1) parts.push('clean (nothing to commit)');
      return {
        output: parts.join('\n'),
        meta: {
          branch: s.branch,
          staged: s.staged.length,
          unstaged: s.unstaged.length,
          untracked: s.untracked.length,
          conflicts: s.conflicts.length,
        },
      };
    },
  });
}
