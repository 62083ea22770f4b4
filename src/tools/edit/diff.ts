/**
 * Unified diffs for the model, approvals and the UI, computed by jsdiff (`diff`): its Myers diff
 * finds the minimal change, so two small edits at both ends of a long file show as two small hunks.
 * Only the rendering is ours, for the headers (`a/`/`b/` paths, `/dev/null` for a new file).
 */
import { diffLines, structuredPatch } from 'diff';

/**
 * Past this many changed lines, finding the minimal diff costs more than it is worth (its search
 * grows with the number of changes), and the whole file is shown replaced instead.
 */
const MAX_EDIT_LENGTH = 1000;

/**
 * A unified diff (`--- a/path`, `+++ b/path`, `@@ -l,n +l,n @@` hunks) of two LF texts, or '' when
 * they are equal; `before` undefined is a new file (`--- /dev/null`). A missing final newline is
 * marked the way `diff -u` marks it, so adding or removing one shows up as a change.
 */
export function unifiedDiff(path: string, before: string | undefined, after: string, context = 3): string {
  if (before === after) return '';
  const patch =
    structuredPatch('', '', before ?? '', after, '', '', { context, maxEditLength: MAX_EDIT_LENGTH }) ??
    wholeReplacement(before ?? '', after);
  const out = [before === undefined ? '--- /dev/null' : `--- a/${path}`, `+++ b/${path}`];
  // jsdiff numbers an empty side by the line after it; diff -u (and `patch`) by the line it follows.
  const start = (line: number, count: number) => (count === 0 ? Math.max(0, line - 1) : line);
  for (const h of patch.hunks) {
    out.push(
      `@@ -${start(h.oldStart, h.oldLines)},${h.oldLines} +${start(h.newStart, h.newLines)},${h.newLines} @@`,
      ...h.lines,
    );
  }
  return out.join('\n');
}

/** Counts of added and removed lines, for summaries. */
export function diffStats(before: string, after: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  const parts = diffLines(before, after, { maxEditLength: MAX_EDIT_LENGTH });
  if (!parts) return { added: lineCount(after), removed: lineCount(before) };
  for (const part of parts) {
    if (part.added) added += part.count ?? 0;
    else if (part.removed) removed += part.count ?? 0;
  }
  return { added, removed };
}

function lineCount(text: string): number {
  if (text === '') return 0;
  const breaks = text.split('\n').length - 1;
  return text.endsWith('\n') ? breaks : breaks + 1;
}

interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

/** Every old line removed and every new one added: still a valid diff when no minimal one was affordable. */
function wholeReplacement(before: string, after: string): { hunks: Hunk[] } {
  const side = (text: string, sign: string) => {
    if (text === '') return [];
    const lines = text.split('\n');
    const noEol = lines.at(-1) !== '';
    if (!noEol) lines.pop();
    const out = lines.map((line) => `${sign}${line}`);
    if (noEol) out.push('\\ No newline at end of file');
    return out;
  };
  const removed = side(before, '-');
  const added = side(after, '+');
  const count = (lines: string[]) => lines.filter((l) => !l.startsWith('\\')).length;
  const oldLines = count(removed);
  const newLines = count(added);
  return {
    hunks: [
      {
        oldStart: 1,
        oldLines,
        newStart: 1,
        newLines,
        lines: [...removed, ...added],
      },
    ],
  };
}
