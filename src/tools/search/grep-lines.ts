import type { GrepCollector } from './grep-output.js';

/**
 * Hands one file's lines to the collector as ripgrep reports them: numbered, context included.
 * A line is split off and tested alone only where a search of the whole text finds a candidate,
 * so most of a file that does not match is never cut into lines.
 */
export class LineFeeder {
  /** See candidateRegex; undefined when every line is tested alone. */
  private readonly candidates: RegExp | undefined;

  private path = '';
  private begun = false;
  private lineNo = 0;
  private afterLeft = 0;
  /** Lines since the last one handed on, kept for before-context. */
  private readonly recent: { lineNo: number; text: string }[] = [];

  constructor(
    private readonly regex: RegExp,
    private readonly context: number,
    private readonly collector: GrepCollector,
  ) {
    this.candidates = candidateRegex(regex);
  }

  /** False when no line of `text` can match; true says only that one might. */
  mayMatch(text: string): boolean {
    if (!this.candidates) return true;
    this.candidates.lastIndex = 0;
    return this.candidates.test(text);
  }

  begin(path: string): void {
    this.path = path;
    this.begun = false;
    this.lineNo = 0;
    this.afterLeft = 0;
    this.recent.length = 0;
  }

  /** Commits the file to the collector, or drops it; a file without a match never reaches it. */
  end(binary: boolean): void {
    if (this.begun) this.collector.endFile(binary);
    this.begun = false;
  }

  /** `text` is whole lines, each ended by `\n` except the file's last one when it has none. */
  lines(text: string): void {
    const end = text.length;
    let start = 0;
    while (start < end) {
      if (this.candidates) {
        this.candidates.lastIndex = start;
        const hit = this.candidates.exec(text);
        // A line's match is found at its own place or later, so the lines before the hit cannot match.
        const lineStart =
          hit === null ? end : hit.index === 0 ? 0 : text.lastIndexOf('\n', hit.index - 1) + 1;
        this.pass(text, start, Math.min(lineStart, end));
        if (lineStart >= end) return;
        start = lineStart;
      }
      const lineEnd = endOfLine(text, start, end);
      this.line(withoutCr(text.slice(start, lineEnd)));
      start = lineEnd + 1;
    }
  }

  private line(text: string): void {
    this.lineNo += 1;
    const m = this.regex.exec(text);
    if (!m) {
      this.passLine(text);
      return;
    }
    if (!this.begun) {
      this.collector.beginFile(this.path);
      this.begun = true;
    }
    for (const r of this.recent) this.collector.addLine(r.lineNo, r.text, false);
    this.recent.length = 0;
    this.collector.addLine(this.lineNo, text, true, m.index);
    this.afterLeft = this.context;
  }

  /** A line known not to match, already counted. */
  private passLine(text: string): void {
    if (this.afterLeft > 0) {
      this.collector.addLine(this.lineNo, text, false);
      this.afterLeft -= 1;
    } else if (this.context > 0) {
      this.recent.push({ lineNo: this.lineNo, text });
      if (this.recent.length > this.context) this.recent.shift();
    }
  }

  /** Whole lines in text[from, to) known not to match: only those that can be context are cut out. */
  private pass(text: string, from: number, to: number): void {
    let start = from;
    while (start < to && this.afterLeft > 0) {
      const lineEnd = endOfLine(text, start, to);
      this.lineNo += 1;
      this.passLine(withoutCr(text.slice(start, lineEnd)));
      start = lineEnd + 1;
    }
    const tail = this.context > 0 ? startOfLastLines(text, start, to, this.context) : to;
    for (; start < tail; start = endOfLine(text, start, tail) + 1) this.lineNo += 1;
    for (; start < to; start = endOfLine(text, start, to) + 1) {
      this.lineNo += 1;
      this.passLine(withoutCr(text.slice(start, endOfLine(text, start, to))));
    }
  }
}

/**
 * The pattern for searching many lines at once, or undefined when that could miss a line's match
 * or cost more than line by line. A match within one line is also one in the whole text: with
 * `m`, `^` and `$` hold at line breaks and before `\r`, and `\b` sees a line break as a non-word
 * character. Two things break that or the cost: a negative look-around that passed at a line's
 * edge may fail on the text beyond it, and a part that can match a line break lets one attempt run
 * on through the rest of the text (`[^q]*x` became quadratic in the file's length), so those parts
 * are rewritten not to, or the pattern is left to the line-by-line search.
 */
export function candidateRegex(regex: RegExp): RegExp | undefined {
  if (regex.source.includes('(?!') || regex.source.includes('(?<!')) return undefined;
  const source = lineBoundSource(regex.source);
  if (source === undefined) return undefined;
  try {
    return new RegExp(source, `${regex.flags.replace(/[gmsy]/g, '')}gm`);
  } catch {
    return undefined;
  }
}

/** Escapes that may stand for a line break (code points, octal, properties), or `\n` itself. */
const OPEN_ESCAPES = new Set([
  'x',
  'u',
  'c',
  'p',
  'P',
  'n',
  '0',
  '1',
  '2',
  '3',
  '4',
  '5',
  '6',
  '7',
  '8',
  '9',
]);

/** Classes that contain a line break, spelled without one outside brackets. */
const NARROWED: Record<string, string> = { s: '[^\\S\\n]', D: '[^\\d\\n]', W: '[^\\w\\n]' };

/**
 * `source` rewritten so that no part of it matches a line break, or undefined when it cannot tell.
 * Only a line break is taken out of any set, so a line's own matches are unchanged.
 */
export function lineBoundSource(source: string): string | undefined {
  let out = '';
  let inClass = false;
  let negated = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      const e = source[i + 1];
      if (e === undefined || OPEN_ESCAPES.has(e)) return undefined;
      i += 1;
      if (!inClass) {
        out += NARROWED[e] ?? `\\${e}`;
        continue;
      }
      // `\s` inside brackets, or an escape that starts a range such as [\t-\r], may take it in.
      if (e in NARROWED || source[i + 1] === '-') return undefined;
      out += `\\${e}`;
    } else if (inClass) {
      if (c.charCodeAt(0) < 0x20) return undefined;
      if (c === ']') {
        // A negated set (even `[^]`, anything) leaves the line break out once it is listed.
        out += negated ? '\\n]' : ']';
        inClass = false;
      } else {
        out += c;
      }
    } else if (c === '[') {
      inClass = true;
      negated = source[i + 1] === '^';
      out += negated ? '[^' : '[';
      if (negated) i += 1;
    } else {
      out += c;
    }
  }
  return inClass ? undefined : out;
}

/** Where the line starting at `start` ends: its `\n`, or `to` for a last line without one. */
function endOfLine(text: string, start: number, to: number): number {
  const nl = text.indexOf('\n', start);
  return nl === -1 || nl > to ? to : nl;
}

/** Where the last `count` whole lines of text[from, to) begin (`from` when there are fewer). */
function startOfLastLines(text: string, from: number, to: number, count: number): number {
  let start = to;
  for (let i = 0; i < count && start > from; i++) {
    // The line before `start` ends at start - 1 (its `\n`, or the last character of a last line
    // without one), so it begins after the `\n` found from start - 2 back.
    start = start - 1 > from ? Math.max(from, text.lastIndexOf('\n', start - 2) + 1) : from;
  }
  return start;
}

function withoutCr(line: string): string {
  return line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
}
