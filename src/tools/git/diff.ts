import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { formatCount, truncateHead } from '../truncate.js';
import { defineTool } from '../types.js';
import { toPathspec } from './pathspec.js';
import { type GitRunner, gitFailure } from './run-git.js';

export const DIFF_MAX_LINES = 500;
export const DIFF_MAX_BYTES = 16_000;
/** Files listed in the summary header before it is cut. */
const DIFF_STAT_MAX_FILES = 50;
/** What is fetched from git at most; the user's view (display) gets all of it, the model the cut. */
const DIFF_FETCH_MAX_BYTES = 2 * 1024 * 1024;

interface FileStat {
  /** The path as shown, `old -> new` for a rename. */
  label: string;
  /** The path to pass back as `path` to see this file alone. */
  file: string;
  added: number | null;
  deleted: number | null;
}

export function createGitDiffTool(git: GitRunner) {
  return defineTool({
    name: 'git_diff',
    description: 'Uncommitted changes as a diff.',
    parameters: z.object({
      path: z.string().optional(),
      staged: z.boolean().optional(),
    }),
    mutates: false,
    touches: (args) => ({ reads: [args.path ?? '.'] }),
    async run(args, ctx) {
      const spec = args.path === undefined ? undefined : await toPathspec(ctx.workspace, args.path);
      const staged = args.staged ?? false;
      const base = ['--literal-pathspecs', 'diff', '--no-ext-diff', ...(staged ? ['--cached'] : [])];
      const tail = spec === undefined ? [] : ['--', spec];
      const [numstat, patch] = await Promise.all([
        git.run(ctx, [...base, '--numstat', '-z', ...tail]),
        git.run(ctx, [...base, ...tail], { maxBytes: DIFF_FETCH_MAX_BYTES }),
      ]);
      if (numstat.exitCode !== 0) throw gitFailure('git diff failed.', numstat);
      if (patch.exitCode !== 0) throw gitFailure('git diff failed.', patch);

      if (patch.stdout.trim() === '') {
        return { output: await noChanges(ctx.workspace, spec, staged), meta: { files: 0 } };
      }

      const stats = parseNumstat(numstat.stdout);
      const header = summary(stats);
      const cut = truncateHead(patch.stdout, { maxLines: DIFF_MAX_LINES, maxBytes: DIFF_MAX_BYTES });
      const body = cut.text.replace(/\n$/, '');
      if (!cut.truncated && !patch.truncated) {
        return { output: `${header}\n\n${body}`, meta: { files: stats.length } };
      }

      const total = patch.truncated
        ? `more than ${formatCount(cut.totalLines)}`
        : formatCount(cut.totalLines);
      const shownFiles = (cut.text.match(/^diff --git /gm) ?? []).length;
      const partial = stats[Math.max(0, shownFiles - 1)]?.file;
      const how =
        spec === undefined
          ? `Pass path${partial ? `="${partial}"` : ''} to see one file at a time; the summary above lists them all.`
          : `Read the file with read_file, or page the diff with the shell tool: ` +
            `git diff${staged ? ' --cached' : ''} -- ${shellQuote(spec)} | sed -n '${cut.keptLines + 1},${cut.keptLines + DIFF_MAX_LINES}p'`;
      const note = `[Diff cut: showing ${formatCount(cut.keptLines)} of ${total} lines. ${how}]`;
      return {
        output: `${header}\n\n${body}\n${note}`,
        display: `${header}\n\n${patch.stdout}`,
        meta: { files: stats.length, truncated: true },
      };
    },
  });
}

async function noChanges(workspace: string, spec: string | undefined, staged: boolean): Promise<string> {
  const where = spec === undefined ? '' : ` in ${spec}`;
  const missing =
    spec !== undefined && (await lstat(path.join(workspace, spec)).catch(() => undefined)) === undefined
      ? ` (${spec} does not exist)`
      : '';
  const other = staged
    ? 'Omit staged to see unstaged changes.'
    : 'Pass staged=true for staged changes; new files show up only after git_add.';
  return `No ${staged ? 'staged' : 'unstaged'} changes${where}${missing}. ${other}`;
}

/** `git diff --numstat -z`: `added\tdeleted\tpath\0`, or for a rename `added\tdeleted\t\0old\0new\0`. */
function parseNumstat(text: string): FileStat[] {
  const stats: FileStat[] = [];
  const records = text.split('\0');
  for (let i = 0; i < records.length; i++) {
    const m = /^(-|\d+)\t(-|\d+)\t([\s\S]*)$/.exec(records[i] ?? '');
    if (!m) continue;
    const added = m[1] === '-' ? null : Number(m[1]);
    const deleted = m[2] === '-' ? null : Number(m[2]);
    if (m[3] === '') {
      const from = records[++i] ?? '';
      const to = records[++i] ?? '';
      stats.push({ label: `${from} -> ${to}`, file: to, added, deleted });
    } else {
      stats.push({ label: m[3] ?? '', file: m[3] ?? '', added, deleted });
    }
  }
  return stats;
}

function summary(stats: FileStat[]): string {
  let added = 0;
  let deleted = 0;
  for (const s of stats) {
    added += s.added ?? 0;
    deleted += s.deleted ?? 0;
  }
  const n = stats.length;
  const lines = [`${formatCount(n)} file${n === 1 ? '' : 's'} changed, +${added} -${deleted}`];
  for (const s of stats.slice(0, DIFF_STAT_MAX_FILES)) {
    lines.push(`  ${s.label} ${s.added === null ? '(binary)' : `+${s.added} -${s.deleted ?? 0}`}`);
  }
  if (n > DIFF_STAT_MAX_FILES) lines.push(`  ... and ${formatCount(n - DIFF_STAT_MAX_FILES)} more files`);
  return lines.join('\n');
}

function shellQuote(s: string): string {
  return /^[\w./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
