import { lcsPairs } from './similarity.js';

export interface NearMiss {
  /** 0-based first line and exclusive end of the closest region. */
  start: number;
  end: number;
  score: number;
}

// Beyond this the scan would take noticeable time; the report then only gives the general hint.
const MAX_SCAN_CELLS = 2_000_000;
const MAX_SCORED_LINES = 60;

/** The file region most like the quoted lines, scored line by line with bigram similarity. */
export function closestRegion(
  fileLines: readonly string[],
  oldLines: readonly string[],
): NearMiss | undefined {
  const k = Math.min(oldLines.length, fileLines.length, MAX_SCORED_LINES);
  if (k === 0 || fileLines.length * k > MAX_SCAN_CELLS) return undefined;
  const cache = new Map<string, Int32Array>();
  const grams = (line: string) => {
    const t = line.trim();
    let g = cache.get(t);
    if (!g) {
      g = bigrams(t);
      cache.set(t, g);
    }
    return g;
  };
  const quoted = oldLines.slice(0, k).map((l) => l.trim());
  const quotedGrams = quoted.map(grams);
  const file = fileLines.map((l) => l.trim());
  const fileGrams = fileLines.map(grams);
  // Blank lines say little about where the text is; long lines say more.
  const weights = quoted.map((l) => (l === '' ? 0.2 : Math.min(Math.max(l.length, 4), 80)));
  const total = weights.reduce((a, b) => a + b, 0);

  let best: NearMiss | undefined;
  for (let s = 0; s + k <= file.length; s++) {
    let score = 0;
    for (let i = 0; i < k; i++) {
      score += weights[i]! * (quoted[i] === file[s + i] ? 1 : dice(quotedGrams[i]!, fileGrams[s + i]!));
    }
    score /= total;
    if (!best || score > best.score) best = { start: s, end: s + oldLines.length, score };
  }
  if (best) best.end = Math.min(best.end, fileLines.length);
  return best;
}

/** Character bigrams as sorted codes, so that two lines compare in one merge pass. */
function bigrams(text: string): Int32Array {
  const out = new Int32Array(Math.max(0, text.length - 1));
  for (let i = 0; i < out.length; i++) out[i] = (text.charCodeAt(i) << 16) | text.charCodeAt(i + 1);
  return out.sort();
}

/** Dice coefficient of two bigram multisets. */
function dice(a: Int32Array, b: Int32Array): number {
  if (a.length === 0 || b.length === 0) return 0;
  let i = 0;
  let j = 0;
  let shared = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      shared++;
      i++;
      j++;
    } else if (a[i]! < b[j]!) i++;
    else j++;
  }
  return (2 * shared) / (a.length + b.length);
}

const MAX_DIFF_LINES = 8;
const MAX_LINE_CHARS = 160;

/** A few `-` (quoted) / `+` (file) lines showing where the quoted text and the region part ways. */
export function lineDifferences(
  oldLines: readonly string[],
  region: readonly string[],
  firstLine: number,
): string[] {
  const pairs = lcsPairs(oldLines, region) ?? [];
  const removed: string[] = [];
  const added: Array<{ text: string; line: number }> = [];
  let i = 0;
  let j = 0;
  for (const [pi, pj] of [...pairs, [oldLines.length, region.length] as [number, number]]) {
    while (i < pi) removed.push(oldLines[i++]!);
    while (j < pj) {
      added.push({ text: region[j]!, line: firstLine + j });
      j++;
    }
    i++;
    j++;
  }
  const whitespaceOnly = new Set(removed.map((l) => l.trim()));
  const quote = (l: string, wsOnly: boolean) => (wsOnly ? JSON.stringify(l) : l);
  const out: string[] = [];
  const max = Math.max(removed.length, added.length);
  for (let k = 0; k < max && out.length < MAX_DIFF_LINES; k++) {
    const r = removed[k];
    const a = added[k];
    const wsOnly = r !== undefined && a !== undefined && r.trim() === a.text.trim();
    if (r !== undefined) out.push(`- ${clip(quote(r, wsOnly))}`);
    if (a !== undefined) {
      const flagged = wsOnly || (r === undefined && whitespaceOnly.has(a.text.trim()));
      out.push(`+ ${clip(quote(a.text, flagged))}   (line ${a.line})`);
    }
  }
  const shown = out.length;
  const all = removed.length + added.length;
  if (all > shown) out.push(`  ... ${all - shown} more differing line${all - shown === 1 ? '' : 's'}`);
  return out;
}

function clip(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}...` : line;
}
