import { z } from 'zod';
import { defineTool } from '../types.js';
import { type GitResult, type GitRunner, gitFailure } from './run-git.js';

/** Hooks (lint, tests) may run long on slow machines. */
const COMMIT_TIMEOUT_MS = 5 * 60_000;

const IDENTITY_UNKNOWN =
  /Author identity unknown|Committer identity unknown|unable to auto-detect email|no email was given|no name was given|empty ident name/i;

export function createGitCommitTool(git: GitRunner) {
  return defineTool({
    name: 'git_commit',
    description:
      'Commit the staged changes with a message; all=true also commits every modified tracked file. Hooks run.',
    parameters: z.object({
      message: z
        .string()
        .refine((m) => m.trim() !== '', 'The commit message is empty')
        .describe('Commit message: a short subject line, optionally a blank line and a body'),
      all: z.boolean().optional().describe('Also stage modified and deleted tracked files (git commit -a)'),
    }),
    mutates: true,
    touches: (args) => ({ text: args.message }),
    async run(args, ctx) {
      // The identity is the user's own configuration; setting one here would forge authorship.
      const r = await git.run(ctx, ['commit', ...(args.all ? ['-a'] : []), '-m', args.message], {
        timeoutMs: COMMIT_TIMEOUT_MS,
      });
      if (r.exitCode !== 0) throw commitFailure(r, args.all ?? false);

      const shown = await git.run(ctx, [
        'log',
        '-1',
        '--no-show-signature',
        '--format=%h%x1f%s',
        '--shortstat',
        'HEAD',
      ]);
      if (shown.exitCode !== 0) return 'Committed.';
      const [first = '', ...rest] = shown.stdout.split('\n');
      const [hash = '', subject = ''] = first.split('\x1f');
      const stat = rest.map((l) => l.trim()).find((l) => l !== '') ?? 'no files changed';
      return { output: `Committed ${hash}: ${subject}\n${stat}`, meta: { hash } };
    },
  });
}

function commitFailure(r: GitResult, all: boolean) {
  const said = `${r.stderr}\n${r.stdout}`;
  if (IDENTITY_UNKNOWN.test(said)) {
    return gitFailure(
      'Cannot commit: git does not know who the author is. Ask the user to run ' +
        '`git config --global user.name "Their Name"` and `git config --global user.email "they@example.com"`; ' +
        'do not make up an identity.',
      r,
    );
  }
  if (/nothing added to commit but untracked files present/.test(r.stdout)) {
    return gitFailure(
      'Nothing staged to commit; there are only untracked files. Stage them with git_add first.',
      r,
    );
  }
  if (/no changes added to commit/.test(r.stdout)) {
    return gitFailure(
      all
        ? 'Nothing to commit: no tracked file has changes.'
        : 'Nothing staged to commit. Stage files with git_add, or pass all=true to commit every modified tracked file.',
      r,
    );
  }
  if (/nothing to commit/.test(r.stdout)) {
    return gitFailure('Nothing to commit: the working tree is clean.', r);
  }
  if (/unmerged files|not possible because you have unmerged/i.test(said)) {
    return gitFailure(
      'Cannot commit: there are unresolved merge conflicts. Fix the conflicted files, git_add them, then commit.',
      r,
    );
  }
  // Anything else is most often a hook saying no; its output is on either stream.
  return gitFailure(`Commit failed (exit code ${r.exitCode}); a commit hook may have rejected it.`, r, {
    both: true,
  });
}
