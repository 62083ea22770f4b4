import { formatCount } from '../truncate.js';
import type { ToolContext } from '../types.js';
import { type GitRunner, gitFailure } from './run-git.js';

/** The repository state from `git status --porcelain=v2 --branch -z`, grouped the way people read it. */
export interface RepoStatus {
  /** Branch name, or null when HEAD is detached. */
  branch: string | null;
  /** Commit id of HEAD, or null before the first commit. */
  head: string | null;
  upstream?: { name: string; ahead: number; behind: number } | { name: string; gone: true };
  /** Lines such as `M src/a.ts` or `R old.ts -> new.ts`. */
  staged: string[];
  unstaged: string[];
  untracked: string[];
  /** Unmerged paths with both sides' codes, e.g. `UU src/a.ts`. */
  conflicts: string[];
}

export async function readStatus(git: GitRunner, ctx: ToolContext): Promise<RepoStatus> {
  const r = await git.run(ctx, ['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=normal']);
  if (r.exitCode !== 0) throw gitFailure('git status failed.', r);
  return parseStatus(r.stdout);
}

/**
 * Parses porcelain v2 with `-z`: records end in NUL and paths are raw, so names with spaces,
 * quotes or newlines need no unquoting. A rename record is followed by a record holding the old path.
 */
export function parseStatus(text: string): RepoStatus {
  const status: RepoStatus = {
    branch: null,
    head: null,
    staged: [],
    unstaged: [],
    untracked: [],
    conflicts: [],
  };
  let upstreamName: string | undefined;
  let ab: { ahead: number; behind: number } | undefined;
  const records = text.split('\0');
  for (let i = 0; i < records.length; i++) {
    const rec = records[i] ?? '';
    if (rec === '') continue;
    if (rec.startsWith('# ')) {
      const [key, ...rest] = rec.slice(2).split(' ');
      const value = rest.join(' ');
      if (key === 'branch.oid') status.head = value === '(initial)' ? null : value;
      else if (key === 'branch.head') status.branch = value === '(detached)' ? null : value;
      else if (key === 'branch.upstream') upstreamName = value;
      else if (key === 'branch.ab') {
        const m = /^\+(\d+) -(\d+)$/.exec(value);
        if (m) ab = { ahead: Number(m[1]), behind: Number(m[2]) };
      }
      continue;
    }
    const kind = rec[0];
    if (kind === '?') {
      status.untracked.push(rec.slice(2));
    } else if (kind === '1' || kind === '2') {
      // Fields before the path: 8 for an ordinary change, 9 for a rename or copy (its score).
      const fields = kind === '1' ? 8 : 9;
      const parts = rec.split(' ');
      const xy = parts[1] ?? '..';
      const file = parts.slice(fields).join(' ');
      const from = kind === '2' ? records[++i] : undefined;
      const x = xy[0] ?? '.';
      const y = xy[1] ?? '.';
      if (x !== '.') status.staged.push(from === undefined ? `${x} ${file}` : `${x} ${from} -> ${file}`);
      if (y !== '.') status.unstaged.push(`${y} ${file}`);
    } else if (kind === 'u') {
      const parts = rec.split(' ');
      status.conflicts.push(`${parts[1] ?? 'UU'} ${parts.slice(10).join(' ')}`);
    }
  }
  if (upstreamName !== undefined) {
    // An upstream without ahead/behind counts is configured but no longer exists.
    status.upstream = ab ? { name: upstreamName, ...ab } : { name: upstreamName, gone: true };
  }
  return status;
}

/** `On main (origin/main: ahead 1, behind 2)`, `HEAD detached at 1a2b3c4`, `On main (no commits yet)`. */
export function branchLine(s: RepoStatus): string {
  if (s.branch === null) return `HEAD detached at ${s.head?.slice(0, 7) ?? '(unknown)'}`;
  const notes: string[] = [];
  if (s.head === null) notes.push('no commits yet');
  if (s.upstream) {
    if ('gone' in s.upstream) notes.push(`upstream ${s.upstream.name} is gone`);
    else {
      const counts: string[] = [];
      if (s.upstream.ahead > 0) counts.push(`ahead ${s.upstream.ahead}`);
      if (s.upstream.behind > 0) counts.push(`behind ${s.upstream.behind}`);
      notes.push(`${s.upstream.name}: ${counts.length > 0 ? counts.join(', ') : 'up to date'}`);
    }
  }
  return `On ${s.branch}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
}

/** A titled, indented list, cut after `max` entries with a count of the rest. */
export function formatGroup(title: string, lines: string[], max: number): string {
  const shown = lines.slice(0, max).map((l) => `  ${l}`);
  if (lines.length > max) shown.push(`  ... and ${formatCount(lines.length - max)} more`);
  return `${title} (${lines.length}):\n${shown.join('\n')}`;
}
