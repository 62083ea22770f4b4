import { type IndentStyle, pairLines, reindent, sameNesting } from './indent.js';
import { lcsPairs, lineSimilarity, similarity } from './similarity.js';
import { hasElision } from './transforms.js';

/** What the line matchers work on: whole lines, LF, the file without its final empty line. */
export interface MatchInput {
  fileLines: readonly string[];
  oldLines: readonly string[];
  newLines: readonly string[];
  style: IndentStyle;
  /** The whole file, for checks that look beyond the candidate region. */
  content: string;
}

/** A candidate region [start, end) of file lines; `replace` builds its new lines, or undefined to decline. */
export interface LineMatch {
  start: number;
  end: number;
  replace(): string[] | undefined;
}

export interface LineMatcher {
  name: string;
  /** Label for messages: "ignoring ...". */
  ignoring: string;
  find(input: MatchInput): LineMatch[];
}

/** Start indexes where `needle` occurs line for line in `hay`. */
function windows(hay: readonly string[], needle: readonly string[]): number[] {
  const starts: number[] = [];
  const k = needle.length;
  if (k === 0) return starts;
  for (let s = 0; s + k <= hay.length; s++) {
    if (hay[s] !== needle[0]) continue;
    let i = 1;
    while (i < k && hay[s + i] === needle[i]) i++;
    if (i === k) starts.push(s);
  }
  return starts;
}

const trimEnd = (l: string) => l.trimEnd();
const trim = (l: string) => l.trim();
const identity = (n: number) => Array.from({ length: n }, (_, i) => i);

const trailingWhitespace: LineMatcher = {
  name: 'trailing-whitespace',
  ignoring: 'trailing whitespace',
  find({ fileLines, oldLines, newLines }) {
    return windows(fileLines.map(trimEnd), oldLines.map(trimEnd)).map((s) => ({
      start: s,
      end: s + oldLines.length,
      replace: () => [...newLines],
    }));
  },
};

/** new_string re-indented for a window whose lines correspond one to one with old_string's. */
function reindented(input: MatchInput, start: number, end: number): string[] {
  const region = input.fileLines.slice(start, end);
  return reindent(input.newLines, input.oldLines, region, identity(region.length), input.style);
}

/** The block as quoted, shifted or re-stepped (2 vs 4 spaces, tabs vs spaces) as a whole. */
const indentation: LineMatcher = {
  name: 'indentation',
  ignoring: 'indentation',
  find(input) {
    const k = input.oldLines.length;
    return windows(input.fileLines.map(trim), input.oldLines.map(trim))
      .filter((s) => sameNesting(input.oldLines, input.fileLines.slice(s, s + k)))
      .map((s) => ({ start: s, end: s + k, replace: () => reindented(input, s, s + k) }));
  },
};

const trimmedLines: LineMatcher = {
  name: 'trimmed-lines',
  ignoring: 'leading and trailing whitespace on each line',
  find(input) {
    const k = input.oldLines.length;
    return windows(input.fileLines.map(trim), input.oldLines.map(trim)).map((s) => ({
      start: s,
      end: s + k,
      replace: () => reindented(input, s, s + k),
    }));
  },
};

const WORD = /[\p{L}\p{N}_$]/u;

/**
 * Whitespace kept only where it separates two word characters (`return x`), as one space; gone
 * elsewhere, so `f(a,b)` and `f( a, b )` compare equal and a line break is just whitespace.
 */
function canonical(text: string): string {
  const parts = text.trim().split(/\s+/);
  let out = parts[0] ?? '';
  for (let i = 1; i < parts.length; i++) out = joinCanonical(out, parts[i]!);
  return out;
}

function joinCanonical(a: string, b: string): string {
  if (a === '' || b === '') return a + b;
  return WORD.test(a[a.length - 1]!) && WORD.test(b[0]!) ? `${a} ${b}` : a + b;
}

/** Equal up to whitespace, line breaks included: catches re-spaced and re-wrapped lines. */
const collapsedWhitespace: LineMatcher = {
  name: 'collapsed-whitespace',
  ignoring: 'whitespace and line breaks',
  find(input) {
    const target = canonical(input.oldLines.join('\n'));
    if (target === '') return [];
    const norm = input.fileLines.map(canonical);
    const found: LineMatch[] = [];
    for (let s = 0; s < norm.length; s++) {
      if (norm[s] === '' || !target.startsWith(norm[s]!)) continue;
      let acc = norm[s]!;
      let e = s + 1;
      while (acc.length < target.length && e < norm.length) {
        acc = joinCanonical(acc, norm[e]!);
        e++;
        if (!target.startsWith(acc)) break;
      }
      if (acc === target) found.push({ start: s, end: e, replace: () => rewrapped(input, s, e) });
    }
    return found;
  },
};

/**
 * new_string re-indented for a region whose lines may be wrapped differently from old_string's:
 * only lines equal up to whitespace correspond. The region has no blank lines at its ends, so
 * blank lines the model put at the ends of both strings are dropped from new_string too.
 */
function rewrapped(input: MatchInput, start: number, end: number): string[] {
  const blank = (l: string | undefined) => l !== undefined && l.trim() === '';
  const oldLines = [...input.oldLines];
  const newLines = [...input.newLines];
  while (blank(oldLines[0])) {
    oldLines.shift();
    if (blank(newLines[0]) && newLines.length > 1) newLines.shift();
  }
  while (blank(oldLines.at(-1))) {
    oldLines.pop();
    if (blank(newLines.at(-1)) && newLines.length > 1) newLines.pop();
  }
  const region = input.fileLines.slice(start, end);
  const oldToRegion = new Array<number>(oldLines.length).fill(-1);
  const same = (a: string, b: string) => canonical(a) === canonical(b);
  for (const [i, f] of lcsPairs(oldLines, region, same) ?? []) oldToRegion[i] = f;
  return reindent(newLines, oldLines, region, oldToRegion, input.style);
}

const ANCHOR_THRESHOLD = 0.8;

/**
 * First and last lines equal (trimmed), the lines between them similar. The model's lines are
 * merged three ways with the file: where it left an old line as it was, the file's current line is
 * kept, so a stale or misremembered line is not written back; where both changed a line, it declines.
 */
const blockAnchor: LineMatcher = {
  name: 'block-anchor',
  ignoring: 'differences in the lines between the first and the last',
  find(input) {
    const { fileLines, oldLines } = input;
    const k = oldLines.length;
    if (k < 3) return [];
    const first = oldLines[0]!.trim();
    const last = oldLines[k - 1]!.trim();
    // Anchors like `{` and `}` occur everywhere and pin nothing down.
    if (first === '' || last === '' || first.length + last.length < 6) return [];
    if (hasElision(oldLines.join('\n'), input.content)) return [];

    const trimmed = fileLines.map(trim);
    const oldMiddle = oldLines.slice(1, -1).map(trim);
    const oldMiddleText = oldMiddle.join('\n');
    const slack = Math.max(1, Math.floor(k / 4));
    const found: LineMatch[] = [];
    for (let s = 0; s < trimmed.length; s++) {
      if (trimmed[s] !== first) continue;
      let best: { end: number; score: number } | undefined;
      for (let len = Math.max(3, k - slack); len <= k + slack; len++) {
        const e = s + len - 1;
        if (e >= trimmed.length) break;
        if (trimmed[e] !== last) continue;
        const middle = trimmed.slice(s + 1, e);
        // Characters judge edited lines, lines judge added or dropped ones; the merge guards the rest.
        const score = Math.max(
          similarity(middle.join('\n'), oldMiddleText),
          lineSimilarity(middle, oldMiddle),
        );
        if (score >= ANCHOR_THRESHOLD && (!best || score > best.score)) best = { end: e + 1, score };
      }
      if (best) {
        const end = best.end;
        found.push({ start: s, end, replace: () => mergeBlock(input, fileLines.slice(s, end)) });
      }
    }
    return found;
  },
};

const sameText = (a: string, b: string) => a.trim() === b.trim();
const sameChunk = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((l, i) => sameText(l, b[i]!));

/** diff3 of old (base), region (theirs) and new (ours); undefined on a conflicting chunk. */
function mergeBlock(input: MatchInput, region: readonly string[]): string[] | undefined {
  const { oldLines, newLines } = input;
  const oldToRegion = new Map(lcsPairs(oldLines, region, sameText) ?? []);
  const oldToNew = new Map(lcsPairs(oldLines, newLines, sameText) ?? []);
  const adjusted = reindent(newLines, oldLines, region, pairLines(oldLines, region), input.style);

  const out: string[] = [];
  let prev = { i: -1, f: -1, j: -1 };
  const syncs = [...oldToRegion.keys()].filter((i) => oldToNew.has(i));
  syncs.push(oldLines.length);
  for (const i of syncs) {
    const atEnd = i === oldLines.length;
    const f = atEnd ? region.length : oldToRegion.get(i)!;
    const j = atEnd ? newLines.length : oldToNew.get(i)!;
    const base = oldLines.slice(prev.i + 1, i);
    const theirs = region.slice(prev.f + 1, f);
    const ours = newLines.slice(prev.j + 1, j);
    const mine = adjusted.slice(prev.j + 1, j);
    if (sameChunk(base, ours) || sameChunk(ours, theirs)) out.push(...theirs);
    else if (sameChunk(base, theirs)) out.push(...mine);
    else if (base.length === theirs.length && base.length === ours.length) {
      // Same shape on all three sides: settle it line by line, as a chunk it would be a conflict.
      for (let x = 0; x < base.length; x++) {
        if (sameText(base[x]!, ours[x]!) || sameText(ours[x]!, theirs[x]!)) out.push(theirs[x]!);
        else if (sameText(base[x]!, theirs[x]!)) out.push(mine[x]!);
        else return undefined;
      }
    } else return undefined;
    if (!atEnd) out.push(adjusted[j]!);
    prev = { i, f, j };
  }
  return out;
}

/** Tolerant matchers, strictest first. */
export const WHITESPACE_MATCHERS: readonly LineMatcher[] = [
  trailingWhitespace,
  indentation,
  trimmedLines,
  collapsedWhitespace,
];

export const ANCHOR_MATCHER: LineMatcher = blockAnchor;
