import type { Problem } from './types.js';

/**
 * What one check of an edited file says: the errors this edit brought (or left in the lines it
 * touched), not the file's older ones; and whether errors said before are gone. Lines move when an
 * edit adds or removes some, so an error is "old" when the text before the edit had one with the
 * same code and message, wherever it was; an error inside the edited lines is always said.
 */

/** The lines (1-based, inclusive) of `after` that differ from `before`. */
export function changedLines(before: string | undefined, after: string): { from: number; to: number } {
  const next = after.split('\n');
  if (before === undefined) return { from: 1, to: next.length };
  const prev = before.split('\n');
  let head = 0;
  while (head < prev.length && head < next.length && prev[head] === next[head]) head++;
  let tail = 0;
  while (
    tail < prev.length - head &&
    tail < next.length - head &&
    prev[prev.length - 1 - tail] === next[next.length - 1 - tail]
  )
    tail++;
  const from = head + 1;
  const to = next.length - tail;
  // Only lines removed: the lines either side of the cut.
  return to < from ? { from: Math.max(1, head), to: Math.min(next.length, head + 1) } : { from, to };
}

const keyOf = (p: Problem) => `${p.code ?? ''}\0${p.message}`;

/**
 * The errors to say after an edit: in the edited lines, or new to the file. `before` undefined
 * (what the file had is unknown): only those in the edited lines.
 */
export function newErrors(
  after: Problem[],
  before: Problem[] | undefined,
  region: { from: number; to: number },
): Problem[] {
  const old = new Map<string, number>();
  for (const p of before ?? []) if (p.severity === 'error') old.set(keyOf(p), (old.get(keyOf(p)) ?? 0) + 1);
  const within = (p: Problem) => p.line >= region.from && p.line <= region.to;
  const picked = after.filter((p) => {
    if (p.severity !== 'error') return false;
    const count = old.get(keyOf(p)) ?? 0;
    if (count > 0) old.set(keyOf(p), count - 1);
    if (within(p)) return true;
    return before !== undefined && count === 0;
  });
  // The edited lines first (most likely what the model just wrote), then by line.
  return picked.sort((a, b) => Number(within(b)) - Number(within(a)) || a.line - b.line);
}

/** How many of the errors said before no longer appear. */
export function goneCount(said: Problem[], now: Problem[]): number {
  const left = new Map<string, number>();
  for (const p of now) left.set(keyOf(p), (left.get(keyOf(p)) ?? 0) + 1);
  let gone = 0;
  for (const p of said) {
    const count = left.get(keyOf(p)) ?? 0;
    if (count > 0) left.set(keyOf(p), count - 1);
    else gone++;
  }
  return gone;
}

/** The errors said before that still appear (to say "gone" once they do not). */
export function stillThere(said: Problem[], now: Problem[]): Problem[] {
  const keys = new Set(now.map(keyOf));
  return said.filter((p) => keys.has(keyOf(p)));
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** One file's part of a tool result. */
export function describeCheck(
  file: string,
  by: string,
  errors: Problem[],
  gone: number,
  max: number,
  note = '',
): string {
  const fixed =
    gone > 0
      ? `; ${gone === 1 ? 'the error' : `${gone} errors`} reported before ${gone === 1 ? 'is' : 'are'} gone`
      : '';
  if (errors.length === 0) return `[diagnostics] ${file}${note}: no new errors (${by})${fixed}.`;
  const lines = errors.slice(0, max).map(describeProblem);
  const more = errors.length > max ? [`  … and ${errors.length - max} more`] : [];
  return [
    `[diagnostics] ${file}${note}: ${plural(errors.length, 'error')} (${by})${fixed}:`,
    ...lines,
    ...more,
  ].join('\n');
}

export function describeProblem(p: Problem): string {
  const code = p.code ? ` [${p.code}]` : '';
  const hint = p.hint ? `\n    fix: ${p.hint}` : '';
  return `  line ${p.line}: ${p.message}${code}${hint}`;
}
