import { lcsPairs } from './similarity.js';

interface DiffLine {
  text: string;
  /** The file's last line, not followed by a newline. */
  noEol: boolean;
}

interface Op {
  kind: ' ' | '-' | '+';
  line: DiffLine;
}

/**
 * A unified diff (`--- a/path`, `+++ b/path`, `@@ -l,n +l,n @@` hunks) of two LF texts, or '' when
 * they are equal. A missing final newline is marked the way `diff -u` marks it, so adding or removing
 * one shows up as a change.
 */
export function unifiedDiff(path: string, before: string, after: string, context = 3): string {
  if (before === after) return '';
  const ops = diffOps(toLines(before), toLines(after));
  const hunks = groupHunks(ops, Math.max(0, context));
  const out = [`--- a/${path}`, `+++ b/${path}`];
  for (const hunk of hunks) out.push(...renderHunk(ops, hunk));
  return out.join('\n');
}

/** Counts of added and removed lines, for summaries. */
export function diffStats(before: string, after: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const op of diffOps(toLines(before), toLines(after))) {
    if (op.kind === '+') added++;
    else if (op.kind === '-') removed++;
  }
  return { added, removed };
}

function toLines(text: string): DiffLine[] {
  if (text === '') return [];
  const parts = text.split('\n');
  const endsWithNewline = parts[parts.length - 1] === '';
  if (endsWithNewline) parts.pop();
  return parts.map((t, i) => ({ text: t, noEol: !endsWithNewline && i === parts.length - 1 }));
}

function diffOps(a: DiffLine[], b: DiffLine[]): Op[] {
  const same = (x: DiffLine, y: DiffLine) => x.text === y.text && x.noEol === y.noEol;
  // Too large to align: show the differing middle as removed then added, which is still a valid diff.
  const pairs = lcsPairs(a, b, same) ?? commonEnds(a, b, same);
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  for (const [pi, pj] of pairs) {
    while (i < pi) ops.push({ kind: '-', line: a[i++]! });
    while (j < pj) ops.push({ kind: '+', line: b[j++]! });
    ops.push({ kind: ' ', line: a[i]! });
    i++;
    j++;
  }
  while (i < a.length) ops.push({ kind: '-', line: a[i++]! });
  while (j < b.length) ops.push({ kind: '+', line: b[j++]! });
  return ops;
}

function commonEnds<T>(a: T[], b: T[], eq: (x: T, y: T) => boolean): Array<[number, number]> {
  const pairs: Array<[number, number]> = [];
  let head = 0;
  while (head < a.length && head < b.length && eq(a[head]!, b[head]!)) pairs.push([head, head++]);
  const tailPairs: Array<[number, number]> = [];
  let ia = a.length - 1;
  let ib = b.length - 1;
  while (ia >= head && ib >= head && eq(a[ia]!, b[ib]!)) tailPairs.unshift([ia--, ib--]);
  return [...pairs, ...tailPairs];
}

interface Hunk {
  start: number;
  end: number;
}

function groupHunks(ops: Op[], context: number): Hunk[] {
  const hunks: Hunk[] = [];
  for (let k = 0; k < ops.length; k++) {
    if (ops[k]!.kind === ' ') continue;
    const start = Math.max(0, k - context);
    const end = Math.min(ops.length, k + context + 1);
    const last = hunks[hunks.length - 1];
    if (last && start <= last.end) last.end = Math.max(last.end, end);
    else hunks.push({ start, end });
  }
  return hunks;
}

function renderHunk(ops: Op[], hunk: Hunk): string[] {
  let oldBefore = 0;
  let newBefore = 0;
  for (let k = 0; k < hunk.start; k++) {
    if (ops[k]!.kind !== '+') oldBefore++;
    if (ops[k]!.kind !== '-') newBefore++;
  }
  const body: string[] = [];
  let oldCount = 0;
  let newCount = 0;
  for (let k = hunk.start; k < hunk.end; k++) {
    const op = ops[k]!;
    if (op.kind !== '+') oldCount++;
    if (op.kind !== '-') newCount++;
    body.push(`${op.kind}${op.line.text}`);
    if (op.line.noEol) body.push('\\ No newline at end of file');
  }
  // An empty side is numbered by the line it follows, as diff -u does.
  const oldStart = oldCount === 0 ? oldBefore : oldBefore + 1;
  const newStart = newCount === 0 ? newBefore : newBefore + 1;
  return [`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`, ...body];
}
