import { z } from 'zod';
import { defineTool } from '../types.js';
import { toPathspec } from './pathspec.js';
import { type GitRunner, gitFailure, gitMessage } from './run-git.js';
import { formatGroup, readStatus } from './status-parse.js';

const ADD_MAX_LISTED = 50;

export function createGitAddTool(git: GitRunner) {
  return defineTool({
    name: 'git_add',
    description: 'Stage files for the next commit ("." stages every change) and list what is staged.',
    parameters: z.object({
      paths: z
        .array(z.string())
        .min(1)
        .max(200)
        .describe('Files or directories relative to the workspace root, e.g. ["src/a.ts"] or ["."]'),
    }),
    mutates: true,
    touches: (args) => ({ reads: args.paths }),
    async run(args, ctx) {
      const specs: string[] = [];
      for (const p of args.paths) specs.push(await toPathspec(ctx.workspace, p));

      const r = await git.run(ctx, ['--literal-pathspecs', 'add', '--', ...specs]);
      let warning = '';
      if (r.exitCode !== 0) {
        const unmatched = /pathspec '(.*)' did not match any files/.exec(r.stderr);
        if (unmatched) {
          throw gitFailure(
            `Nothing was staged: no file matches "${unmatched[1]}" (it does not exist and is not tracked). Check the path with list_dir or git_status.`,
            r,
          );
        }
        // git stages the other paths and only then complains about ignored ones.
        if (/paths are ignored by one of your \.gitignore files/.test(r.stderr)) {
          warning = `\nNot staged, because .gitignore ignores them:\n${ignoredPaths(r.stderr)}`;
        } else {
          throw gitFailure('git add failed.', r);
        }
      }

      const s = await readStatus(git, ctx);
      const staged =
        s.staged.length === 0
          ? 'Nothing is staged: the paths have no changes.'
          : formatGroup('Staged', s.staged, ADD_MAX_LISTED);
      const rest: string[] = [];
      if (s.unstaged.length > 0) rest.push(`${s.unstaged.length} unstaged`);
      if (s.untracked.length > 0) rest.push(`${s.untracked.length} untracked`);
      const restLine = rest.length > 0 ? `\nStill not staged: ${rest.join(', ')}.` : '';
      return {
        output: `${staged}${restLine}${warning}`,
        ok: warning === '',
        meta: { staged: s.staged.length },
      };
    },
  });
}

function ignoredPaths(stderr: string): string {
  const said = gitMessage({ args: [], exitCode: 1, stdout: '', stderr, truncated: false });
  return said
    .split('\n')
    .filter((l) => !/^The following paths are ignored/.test(l))
    .map((l) => `  ${l}`)
    .join('\n');
}
