import { levenshtein } from '../../util/levenshtein.js';

// Levenshtein is quadratic; past this many cells we fall back to a line-level measure.
const MAX_LEVENSHTEIN_CELLS = 4_000_000;

/** 1 for identical strings, 0 for nothing in common: 1 - distance / longer length. */
export function similarity(a: string, b: string): number {
  const longer = Math.max(a.length, b.length);
  if (longer === 0) return 1;
  if (a.length * b.length > MAX_LEVENSHTEIN_CELLS) return lineSimilarity(a.split('\n'), b.split('\n'));
  return 1 - levenshtein(a, b) / longer;
}

/** Share of lines two blocks have in common, in order (2 * LCS / total). */
export function lineSimilarity(a: readonly string[], b: readonly string[]): number {
  const total = a.length + b.length;
  if (total === 0) return 1;
  const pairs = lcsPairs(a, b);
  return pairs ? (2 * pairs.length) / total : 0;
}

const MAX_LCS_CELLS = 4_000_000;

/**
 * Index pairs [i, j] of a longest common subsequence of `a` and `b`, in increasing order.
 * Common head and tail are matched first so that the quadratic table only covers the part that
 * differs, which for an edit is usually small. Returns null when even that part is too large.
 */
export function lcsPairs<T>(
  a: readonly T[],
  b: readonly T[],
  eq: (x: T, y: T) => boolean = Object.is,
): Array<[number, number]> | null {
  let head = 0;
  while (head < a.length && head < b.length && eq(a[head]!, b[head]!)) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    eq(a[a.length - 1 - tail]!, b[b.length - 1 - tail]!)
  ) {
    tail++;
  }

  const pairs: Array<[number, number]> = [];
  for (let i = 0; i < head; i++) pairs.push([i, i]);

  const n = a.length - head - tail;
  const m = b.length - head - tail;
  if (n > 0 && m > 0) {
    if ((n + 1) * (m + 1) > MAX_LCS_CELLS) return null;
    const width = m + 1;
    // table[i * width + j] = LCS length of a[head+i..] and b[head+j..] (within the middle part).
    const table = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        table[i * width + j] = eq(a[head + i]!, b[head + j]!)
          ? table[(i + 1) * width + j + 1]! + 1
          : Math.max(table[(i + 1) * width + j]!, table[i * width + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (eq(a[head + i]!, b[head + j]!)) {
        pairs.push([head + i, head + j]);
        i++;
        j++;
      } else if (table[(i + 1) * width + j]! >= table[i * width + j + 1]!) {
        i++;
      } else {
        j++;
      }
    }
  }

  for (let k = tail; k > 0; k--) pairs.push([a.length - k, b.length - k]);
  return pairs;
}
