import { z } from 'zod';
import { defineTool } from '../types.js';
import { toPathspec } from './pathspec.js';
import { type GitRunner, gitFailure } from './run-git.js';

const LOG_DEFAULT_COUNT = 10;
const LOG_MAX_COUNT = 50;

// Unit separator: cannot appear in a name or a one-line subject, unlike tabs or spaces.
const SEP = '\x1f';

export function createGitLogTool(git: GitRunner) {
  return defineTool({
    name: 'git_log',
    description: 'Recent commits, newest first.',
    parameters: z.object({
      count: z.number().int().min(1).max(LOG_MAX_COUNT).optional(),
      path: z.string().optional(),
    }),
    mutates: false,
    touches: (args) => ({ reads: [args.path ?? '.'] }),
    async run(args, ctx) {
      const count = args.count ?? LOG_DEFAULT_COUNT;
      const spec = args.path === undefined ? undefined : await toPathspec(ctx.workspace, args.path);
      // One extra commit tells whether there are more than were asked for.
      const r = await git.run(ctx, [
        '--literal-pathspecs',
        'log',
        `--max-count=${count + 1}`,
        '--no-show-signature',
        '--date=short',
        '--format=%h%x1f%ad%x1f%an%x1f%s',
        ...(spec === undefined ? [] : ['--', spec]),
      ]);
      if (r.exitCode !== 0) {
        if (/does not have any commits yet/.test(r.stderr)) return 'No commits yet.';
        throw gitFailure('git log failed.', r);
      }
      const commits = r.stdout.split('\n').filter((l) => l !== '');
      if (commits.length === 0) return spec === undefined ? 'No commits yet.' : `No commits touch ${spec}.`;
      const lines = commits.slice(0, count).map((line) => {
        const [hash, date, author, subject] = line.split(SEP);
        return `${hash} ${date} (${author}) ${subject ?? ''}`.trimEnd();
      });
      if (commits.length > count) {
        const next = Math.min(LOG_MAX_COUNT, count * 2);
        lines.push(
          count < LOG_MAX_COUNT
            ? `[Older commits exist; pass count=${next} to see more.]`
            : '[Older commits exist; use the shell tool (git log --skip=50) to go further back.]',
        );
      }
      return { output: lines.join('\n'), meta: { commits: Math.min(count, commits.length) } };
    },
  });
}
