/** Edit distance between two strings (insert, delete, substitute each cost 1). */
export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let prev = new Uint32Array(b.length + 1);
  let cur = new Uint32Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const cost = ca === b.charCodeAt(j - 1) ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
    }
    [prev, cur] = [cur, prev];
  }
  return prev[b.length]!;
}

/**
 * The known name a mistyped one most likely meant: the same word in another case or separator
 * style (`maxIterations`, `base-url`), else the nearest by edit distance within a third of its
 * length, else the only name it abbreviates (`temp`).
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const squash = (s: string) => s.toLowerCase().replace(/[-_\s]/g, '');
  const same = candidates.find((c) => squash(c) === squash(word));
  if (same) return same;
  const near = nearest(word, candidates);
  if (near) return near;
  const extended = candidates.filter((c) => word.length >= 3 && squash(c).startsWith(squash(word)));
  return extended.length === 1 ? extended[0] : undefined;
}

function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const candidate of candidates) {
    const d = levenshtein(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/**
 * Whether `typed` is `name` with one slip, ignoring case: one letter added, missing, changed, or two
 * neighbours swapped (`sesions`, `sessoins`, `Sessions`). The same word is not a slip.
 */
export function oneSlipFrom(typed: string, name: string): boolean {
  const a = typed.toLowerCase();
  const b = name.toLowerCase();
  if (typed === name || Math.abs(a.length - b.length) > 1) return false;
  if (a === b) return true;
  let i = 0;
  while (a[i] === b[i]) i++;
  if (a.length === b.length) {
    const swapped = a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2);
    return swapped || a.slice(i + 1) === b.slice(i + 1);
  }
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}
