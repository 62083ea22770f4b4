import { formatCount } from '../truncate.js';

export interface GrepLimits {
  /** Matching lines shown at most. */
  maxMatches: number;
  /** Characters of output at most, notes aside. */
  maxChars: number;
  /** Longer lines are cut to a window of this many characters around the match. */
  maxLineChars: number;
  /** The search stops once this many matching lines are known: enough to say "at least N". */
  countLimit: number;
  /** Lines shown before and after each match. */
  context: number;
}

interface HeldLine {
  lineNo: number;
  text: string;
  isMatch: boolean;
  /** Where the first match starts (UTF-16 index), or -1 for a context line. */
  matchAt: number;
}

interface Emitted {
  text: string;
  lineNo: number;
  isMatch: boolean;
}

/**
 * Gathers what either engine finds, file by file, and prints it the way
 * `rg --no-heading --line-number` does: `path:line:text` for matches, `path-line-text` for
 * context, `--` between groups that do not touch. Both engines feed the same calls in the same
 * order, so their output is identical by construction: only what they feed in can differ.
 *
 * A file's lines are held until its end, because a NUL byte late in the file makes it binary and
 * all of it is dropped then (ripgrep reports that only in the file's closing message).
 */
export class GrepCollector {
  /** Matching lines in the files committed so far. */
  totalMatches = 0;
  filesWithMatches = 0;

  private readonly out: Emitted[] = [];
  private chars = 0;
  private shown = 0;
  private full = false;

  private path = '';
  private held: HeldLine[] = [];
  private heldMatches = 0;
  private fileMatches = 0;
  private lastHeldMatch = -1;

  constructor(private readonly limits: GrepLimits) {}

  /** True once enough is known; the caller stops searching. */
  get done(): boolean {
    return this.totalMatches >= this.limits.countLimit;
  }

  beginFile(path: string): void {
    this.path = path;
    this.held = [];
    this.heldMatches = 0;
    this.fileMatches = 0;
    this.lastHeldMatch = -1;
  }

  /** `text` without its line terminator. Lines must arrive in order, each at most once. */
  addLine(lineNo: number, text: string, isMatch: boolean, matchAt = -1): void {
    if (isMatch) this.fileMatches += 1;
    if (this.full) return;
    const room = this.heldMatches < this.limits.maxMatches - this.shown;
    if (isMatch && room) {
      this.held.push({ lineNo, text, isMatch, matchAt });
      this.heldMatches += 1;
      this.lastHeldMatch = lineNo;
    } else if (!isMatch && (room || lineNo <= this.lastHeldMatch + this.limits.context)) {
      this.held.push({ lineNo, text, isMatch, matchAt: -1 });
    }
  }

  /** Commits the current file, or drops it when it turned out to be binary. */
  endFile(binary: boolean): void {
    const held = this.held;
    this.held = [];
    if (binary || this.fileMatches === 0) return;
    this.totalMatches += this.fileMatches;
    this.filesWithMatches += 1;
    if (!this.full) this.emit(held);
  }

  private emit(lines: HeldLine[]): void {
    const { context, maxChars, maxMatches, maxLineChars } = this.limits;
    let prev = -1;
    for (const line of lines) {
      const separated = context > 0 && this.out.length > 0 && (prev === -1 || line.lineNo !== prev + 1);
      const text = `${this.path}${line.isMatch ? ':' : '-'}${line.lineNo}${line.isMatch ? ':' : '-'}${cutLine(line.text, line.matchAt, maxLineChars)}`;
      const cost = text.length + 1 + (separated ? 3 : 0);
      if (this.chars + cost > maxChars || (line.isMatch && this.shown >= maxMatches)) {
        this.full = true;
        this.dropTrailingContext();
        return;
      }
      if (separated) this.out.push({ text: '--', lineNo: -1, isMatch: false });
      this.out.push({ text, lineNo: line.lineNo, isMatch: line.isMatch });
      this.chars += cost;
      prev = line.lineNo;
      if (line.isMatch) this.shown += 1;
    }
    if (this.shown >= maxMatches) this.full = true;
  }

  /** When the budget cuts a file short, context that only led up to an unshown match goes too. */
  private dropTrailingContext(): void {
    let lastMatch = -1;
    for (let i = this.out.length - 1; i >= 0; i--) {
      if (this.out[i]!.isMatch) {
        lastMatch = this.out[i]!.lineNo;
        break;
      }
    }
    while (this.out.length > 0) {
      const last = this.out[this.out.length - 1]!;
      if (last.isMatch || (last.lineNo !== -1 && last.lineNo <= lastMatch + this.limits.context)) break;
      this.out.pop();
    }
  }

  /** The text for the model; `stopped` says the search ended early for a reason worth telling. */
  render(stopped?: 'timeout'): string {
    const lines = this.out.map((l) => l.text);
    const hidden = this.totalMatches - this.shown;
    const atLeast = this.done || stopped === 'timeout' ? 'at least ' : '';
    if (hidden > 0) {
      const files = `${formatCount(this.filesWithMatches)} file${this.filesWithMatches === 1 ? '' : 's'}`;
      lines.push(
        `[Showing ${formatCount(this.shown)} of ${atLeast}${formatCount(this.totalMatches)} matching lines ` +
          `in ${atLeast}${files}. Narrow the pattern, path or glob to see the rest.]`,
      );
    }
    if (stopped === 'timeout') {
      lines.push('[The search timed out, so results are incomplete. Narrow the path or glob.]');
    }
    return lines.join('\n');
  }
}

/**
 * Keeps `max` characters of a long line: the start, or a window that begins shortly before the
 * match when the match lies further in (minified code puts everything on one line).
 */
export function cutLine(text: string, matchAt: number, max: number): string {
  if (text.length <= max) return text;
  let start = 0;
  if (matchAt > max - 100) start = Math.min(matchAt - 60, text.length - max);
  start = offSurrogate(text, Math.max(0, start));
  const end = offSurrogate(text, Math.min(text.length, start + max));
  const head = start > 0 ? '…' : '';
  const tail = end < text.length ? '…' : '';
  return `${head}${text.slice(start, end)}${tail} [line cut: ${formatCount(text.length)} chars]`;
}

function offSurrogate(text: string, i: number): number {
  const code = text.charCodeAt(i - 1);
  return i > 0 && i < text.length && code >= 0xd800 && code <= 0xdbff ? i - 1 : i;
}

export const INVALID_REGEX_HINT =
  'Escape special characters ( ) [ ] { } . * + ? ^ $ | \\ with a backslash to match them literally, ' +
  'or search for a plain word instead.';

/** Both engines search one line at a time; a line break in the pattern could never match. */
export function multilinePatternError(pattern: string): string | undefined {
  if (!pattern.includes('\n') && !/(^|[^\\])(\\\\)*\\n/.test(pattern)) return undefined;
  return (
    `The pattern ${JSON.stringify(pattern)} contains a line break (\\n), but grep matches one line ` +
    'at a time. Search for a single line of the text instead.'
  );
}
