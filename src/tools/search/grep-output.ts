import { isAscii } from 'node:buffer';
import { TextDecoder } from 'node:util';
import { formatBytes, formatCount } from '../truncate.js';

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
  /** Files larger than this are not searched (and listed as skipped). */
  maxFileBytes: number;
  /** Lines longer than this, terminator included, are known only by their start (ripgrep's --max-columns). */
  maxLineBytes: number;
}

export type SearchEnd = 'complete' | 'limit' | 'timeout';

/** What either engine is asked to do, and where it reports. */
export interface SearchRequest {
  pattern: string;
  ignoreCase: boolean;
  limits: GrepLimits;
  collector: GrepCollector;
  signal: AbortSignal;
  /** Epoch milliseconds after which the search stops with what it has. */
  deadline: number;
}

interface HeldLine {
  lineNo: number;
  /** As shown: cut to the window around its match. */
  text: string;
  isMatch: boolean;
}

interface HeldFile {
  path: string;
  lines: HeldLine[];
}

/**
 * Gathers what either engine finds, file by file, and prints it the way
 * `rg --no-heading --line-number` does: `path:line:text` for matches, `path-line-text` for
 * context, `--` between groups that do not touch. Files may arrive in any order (ripgrep searches
 * on several threads) and are printed in walk order, so both engines print the same: only what
 * they feed in can differ.
 *
 * A file's lines are held until its end, because a NUL byte late in the file makes it binary and
 * all of it is dropped then (ripgrep says so only after the file's lines).
 */
export class GrepCollector {
  /** Matching lines in the files committed so far. */
  totalMatches = 0;
  filesWithMatches = 0;

  private readonly files: HeldFile[] = [];
  private readonly tooBig: { path: string; size: number }[] = [];
  /** Matching files left out because they may hold secrets. */
  private readonly secret: string[] = [];

  private path = '';
  private held: HeldLine[] = [];
  private heldMatches = 0;
  private fileMatches = 0;
  private lastHeldMatch = -1;

  constructor(
    private readonly limits: GrepLimits,
    /** Files whose matches are not shown (see ToolContext.leavesOut); they are named as left out. */
    private readonly leavesOut?: (path: string) => boolean,
  ) {}

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

  /**
   * A line of the current file, in order, each at most once: `text` without its terminator (for
   * a long line, at least its first maxLineBytes bytes), `matchAt` the UTF-16 index of its first
   * match (-1 for a context line, beyond `text` when the match is past what `text` holds).
   */
  addLine(lineNo: number, text: string, isMatch: boolean, matchAt = -1, long = false): void {
    if (isMatch) this.fileMatches += 1;
    // No file shows more than maxMatches matches, so later lines are only counted.
    const room = this.heldMatches < this.limits.maxMatches;
    if (isMatch ? !room : !room && lineNo > this.lastHeldMatch + this.limits.context) return;
    this.held.push({ lineNo, text: showLine(text, matchAt, long, this.limits), isMatch });
    if (isMatch) {
      this.heldMatches += 1;
      this.lastHeldMatch = lineNo;
    }
  }

  /** Commits the current file, or drops it when it turned out to be binary. */
  endFile(binary: boolean): void {
    const lines = this.held;
    this.held = [];
    if (binary || this.fileMatches === 0) return;
    if (this.leavesOut?.(this.path)) {
      this.secret.push(this.path);
      return;
    }
    this.totalMatches += this.fileMatches;
    this.filesWithMatches += 1;
    this.files.push({ path: this.path, lines });
  }

  /** A file left out for being over maxFileBytes. */
  skipFile(path: string, size: number): void {
    this.tooBig.push({ path, size });
  }

  /** The text for the model; `stopped` says the search ended early for a reason worth telling. */
  render(stopped?: 'timeout'): string {
    const { shown, lines } = this.emit();
    const hidden = this.totalMatches - shown;
    const atLeast = this.done || stopped === 'timeout' ? 'at least ' : '';
    if (hidden > 0) {
      const files = `${formatCount(this.filesWithMatches)} file${this.filesWithMatches === 1 ? '' : 's'}`;
      lines.push(
        `[Showing ${formatCount(shown)} of ${atLeast}${formatCount(this.totalMatches)} matching lines ` +
          `in ${atLeast}${files}. Narrow the pattern, path or glob to see the rest.]`,
      );
    }
    const skipped = this.skippedNote();
    if (skipped) lines.push(skipped);
    if (stopped === 'timeout') {
      lines.push('[The search timed out, so results are incomplete. Narrow the path or glob.]');
    }
    return lines.join('\n');
  }

  /** What was not searched for being too large, or not shown for looking like a secret; undefined when nothing was. */
  skippedNote(): string | undefined {
    const notes = [this.tooBigNote(), secretsNote(this.secret, 'grep')].filter((n) => n !== undefined);
    return notes.length > 0 ? notes.join('\n') : undefined;
  }

  private tooBigNote(): string | undefined {
    const n = this.tooBig.length;
    if (n === 0) return undefined;
    const listed = this.tooBig
      .sort((a, b) => comparePaths(a.path, b.path))
      .slice(0, 5)
      .map((f) => `${f.path} (${formatBytes(f.size)})`);
    const more = n > listed.length ? ` and ${formatCount(n - listed.length)} more` : '';
    return (
      `[Skipped ${formatCount(n)} file${n === 1 ? '' : 's'} over ${formatBytes(this.limits.maxFileBytes)}: ` +
      `${listed.join(', ')}${more}. The shell's grep can search ${n === 1 ? 'it' : 'them'}.]`
    );
  }

  /** The files' lines in walk order, as far as the budgets allow. */
  private emit(): { shown: number; lines: string[] } {
    const { context, maxChars, maxMatches } = this.limits;
    const out: HeldLine[] = [];
    let chars = 0;
    let shown = 0;
    this.files.sort((a, b) => comparePaths(a.path, b.path));
    files: for (const file of this.files) {
      let prev = -1;
      for (const line of file.lines) {
        const separated = context > 0 && out.length > 0 && (prev === -1 || line.lineNo !== prev + 1);
        const sep = line.isMatch ? ':' : '-';
        const text = `${file.path}${sep}${line.lineNo}${sep}${line.text}`;
        const cost = text.length + 1 + (separated ? 3 : 0);
        if (chars + cost > maxChars || (line.isMatch && shown >= maxMatches)) {
          dropTrailingContext(out, context);
          break files;
        }
        if (separated) out.push({ text: '--', lineNo: -1, isMatch: false });
        out.push({ text, lineNo: line.lineNo, isMatch: line.isMatch });
        chars += cost;
        prev = line.lineNo;
        if (line.isMatch) shown += 1;
      }
      if (shown >= maxMatches) break;
    }
    return { shown, lines: out.map((l) => l.text) };
  }
}

/** When the budget cuts a file short, context that only led up to an unshown match goes too. */
function dropTrailingContext(out: HeldLine[], context: number): void {
  let lastMatch = -1;
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i]!.isMatch) {
      lastMatch = out[i]!.lineNo;
      break;
    }
  }
  while (out.length > 0) {
    const last = out[out.length - 1]!;
    if (last.isMatch || (last.lineNo !== -1 && last.lineNo <= lastMatch + context)) break;
    out.pop();
  }
}

/**
 * Walk order as a comparison of workspace-relative paths: directory by directory, each level's
 * names in UTF-16 order, which is what the walker sorts by.
 */
export function comparePaths(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x === 47) return -1;
    if (y === 47) return 1;
    return x - y;
  }
  return a.length - b.length;
}

/**
 * A line as shown. One within maxLineBytes is cut by cutLine. Of a longer one only its start is
 * known to the ripgrep engine (at least maxLineBytes bytes), so it is shown only when the window
 * lies in its first maxLineBytes bytes, which both engines can tell alike.
 */
function showLine(text: string, matchAt: number, long: boolean, limits: GrepLimits): string {
  const max = limits.maxLineChars;
  if (!long) return cutLine(text, matchAt, max);
  const cap = formatBytes(limits.maxLineBytes);
  const start = beforeSurrogate(text, matchAt > max - 100 ? matchAt - 60 : 0);
  const end = beforeSurrogate(text, start + max);
  if (end > text.length || Buffer.byteLength(text.slice(0, end)) > limits.maxLineBytes) {
    return `[a line over ${cap}; its match is too far in to show]`;
  }
  return `${start > 0 ? '…' : ''}${text.slice(start, end)}… [line cut: over ${cap}]`;
}

/**
 * Keeps `max` characters of a long line: the start, or a window that begins shortly before the
 * match when the match lies further in (minified code puts everything on one line).
 */
function cutLine(text: string, matchAt: number, max: number): string {
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
  return i < text.length ? beforeSurrogate(text, i) : i;
}

/** `i`, or one less so as not to split a surrogate pair. */
function beforeSurrogate(text: string, i: number): number {
  const code = text.charCodeAt(i - 1);
  return i > 0 && code >= 0xd800 && code <= 0xdbff ? i - 1 : i;
}

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** UTF-8 bytes as text, invalid sequences replaced, as both engines decode them. */
export function decodeUtf8(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : utf8.decode(bytes);
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

/**
 * Says which files were left out for looking like secrets, and how the user can let the tool see
 * them: the model cannot, and should not try to, get around it.
 */
export function secretsNote(paths: readonly string[], tool: string): string | undefined {
  const n = paths.length;
  if (n === 0) return undefined;
  const sorted = [...paths].sort(comparePaths);
  const listed = sorted.slice(0, 5).join(', ');
  const more = n > 5 ? ` and ${formatCount(n - 5)} more` : '';
  return (
    `[Left out ${formatCount(n)} file${n === 1 ? '' : 's'} that may hold secrets: ${listed}${more}. ` +
    `The user can allow it with a rule such as --allow '${tool}(${sorted[0]})'.]`
  );
}
