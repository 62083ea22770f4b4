import { lcsPairs } from './similarity.js';

// Widths only serve to compare nesting; 4 is what models assume when they turn a tab into spaces.
const TAB_WIDTH = 4;

export interface IndentStyle {
  useTabs: boolean;
}

function leadingWhitespace(line: string): string {
  return /^[ \t]*/.exec(line)![0];
}

function isBlank(line: string): boolean {
  return line.trim() === '';
}

function indentWidth(line: string): number {
  let width = 0;
  for (const ch of leadingWhitespace(line)) width += ch === '\t' ? TAB_WIDTH : 1;
  return width;
}

/** Tabs if more indented lines start with a tab than with spaces. */
export function detectStyle(lines: readonly string[]): IndentStyle {
  let tabs = 0;
  let spaces = 0;
  for (const line of lines) {
    if (line.startsWith('\t')) tabs++;
    else if (line.startsWith(' ') && !isBlank(line)) spaces++;
  }
  return { useTabs: tabs > spaces };
}

function makeIndent(width: number, style: IndentStyle): string {
  const w = Math.max(0, Math.round(width));
  if (!style.useTabs) return ' '.repeat(w);
  return '\t'.repeat(Math.floor(w / TAB_WIDTH)) + ' '.repeat(w % TAB_WIDTH);
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** The indentation step of a block: gcd of its widths above the shallowest line; 0 if flat. */
function indentUnit(lines: readonly string[]): number {
  const widths = lines.filter((l) => !isBlank(l)).map(indentWidth);
  if (widths.length === 0) return 0;
  const base = Math.min(...widths);
  return widths.reduce((g, w) => gcd(g, w - base), 0);
}

/**
 * True when `file` has the same nesting as `old`, level for level, whatever each side's base
 * indentation and step (2 vs 4 spaces, tabs vs spaces). Blank lines are ignored.
 */
export function sameNesting(old: readonly string[], file: readonly string[]): boolean {
  const oldUnit = indentUnit(old);
  const fileUnit = indentUnit(file);
  const oldBase = minWidth(old);
  const fileBase = minWidth(file);
  for (let i = 0; i < old.length; i++) {
    if (isBlank(old[i]!)) continue;
    const oldLevel = oldUnit === 0 ? 0 : (indentWidth(old[i]!) - oldBase) / oldUnit;
    const fileLevel = fileUnit === 0 ? 0 : (indentWidth(file[i]!) - fileBase) / fileUnit;
    if (oldLevel !== fileLevel) return false;
  }
  return true;
}

function minWidth(lines: readonly string[]): number {
  const widths = lines.filter((l) => !isBlank(l)).map(indentWidth);
  return widths.length ? Math.min(...widths) : 0;
}

/** For each line of `a`, the index of the line of `b` it corresponds to, or -1. */
export function pairLines(a: readonly string[], b: readonly string[]): number[] {
  const map = new Array<number>(a.length).fill(-1);
  if (a.length === b.length) {
    for (let i = 0; i < a.length; i++) map[i] = i;
    return map;
  }
  for (const [i, j] of lcsPairs(a, b, (x, y) => x.trim() === y.trim()) ?? []) map[i] = j;
  return map;
}

interface Anchor {
  newWidth: number;
  fileWidth: number;
}

/**
 * Re-indents the model's new lines for a region it quoted with the wrong indentation. A new line
 * standing for an old line takes the file's indentation of the region line that old line matched,
 * moved by however much the model changed it; other lines keep their offset from the nearest such
 * line. Offsets are scaled between the model's and the file's indent steps.
 *
 * `oldToRegion[i]` is the region line old line i matched, or -1.
 */
export function reindent(
  newLines: readonly string[],
  oldLines: readonly string[],
  region: readonly string[],
  oldToRegion: readonly number[],
  style: IndentStyle,
): string[] {
  const newToOld = pairLines(newLines, oldLines);
  // Models often quote the first line from after its indentation (the rest being right), which
  // says nothing about how the remaining lines relate: that line is fixed but not used as an anchor.
  const firstUnindented =
    oldLines.length > 1 &&
    leadingWhitespace(oldLines[0]!) === '' &&
    region.length > 0 &&
    oldToRegion[0] === 0 &&
    leadingWhitespace(region[0]!) !== '';
  const skip = firstUnindented ? 1 : 0;
  const oldUnit = indentUnit([
    ...oldLines.slice(skip),
    ...newLines.filter((_, j) => skip === 0 || newToOld[j] !== 0),
  ]);
  const fileUnit = indentUnit(region.slice(skip));
  const scale = oldUnit > 0 && fileUnit > 0 ? fileUnit / oldUnit : 1;

  const out = new Array<string | undefined>(newLines.length);
  const anchors = new Array<Anchor | undefined>(newLines.length);
  for (let j = 0; j < newLines.length; j++) {
    const line = newLines[j]!;
    if (isBlank(line)) {
      out[j] = '';
      continue;
    }
    const i = newToOld[j]!;
    const f = i >= 0 ? oldToRegion[i]! : -1;
    if (f < 0 || isBlank(oldLines[i]!) || isBlank(region[f]!)) continue;
    const body = line.trimStart();
    if (firstUnindented && i === 0 && leadingWhitespace(line) === '') {
      out[j] = leadingWhitespace(region[0]!) + body;
      continue;
    }
    const newWidth = indentWidth(line);
    const oldWidth = indentWidth(oldLines[i]!);
    const fileIndent =
      newWidth === oldWidth
        ? leadingWhitespace(region[f]!)
        : makeIndent(indentWidth(region[f]!) + (newWidth - oldWidth) * scale, style);
    out[j] = fileIndent + body;
    anchors[j] = { newWidth, fileWidth: indentWidth(fileIndent) };
  }

  const fallback = firstAnchor(oldLines, region, oldToRegion, skip);
  for (let j = 0; j < newLines.length; j++) {
    if (out[j] !== undefined) continue;
    const anchor = nearestAnchor(anchors, j) ?? fallback;
    const line = newLines[j]!;
    const width = anchor
      ? anchor.fileWidth + (indentWidth(line) - anchor.newWidth) * scale
      : indentWidth(line);
    out[j] = makeIndent(width, style) + line.trimStart();
  }
  return out as string[];
}

function nearestAnchor(anchors: ReadonlyArray<Anchor | undefined>, j: number): Anchor | undefined {
  for (let k = j - 1; k >= 0; k--) if (anchors[k]) return anchors[k];
  for (let k = j + 1; k < anchors.length; k++) if (anchors[k]) return anchors[k];
  return undefined;
}

/** The first old line that matched a non-blank region line, as a reference for unpaired lines. */
function firstAnchor(
  oldLines: readonly string[],
  region: readonly string[],
  oldToRegion: readonly number[],
  from: number,
): Anchor | undefined {
  for (let i = from; i < oldLines.length; i++) {
    const f = oldToRegion[i]!;
    if (f < 0 || isBlank(oldLines[i]!) || isBlank(region[f]!)) continue;
    return { newWidth: indentWidth(oldLines[i]!), fileWidth: indentWidth(region[f]!) };
  }
  return undefined;
}
