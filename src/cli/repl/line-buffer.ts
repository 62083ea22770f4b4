/**
 * The text being edited and the cursor in it (an index into the string, always on a grapheme
 * boundary, so one key press moves over or deletes what a person sees as one character). The text may hold newlines: a multi-line entry is one buffer.
 */
export class LineBuffer {
  text = '';
  cursor = 0;

  set(text: string): void {
    this.text = text;
    this.cursor = text.length;
  }

  insert(text: string): void {
    this.text = this.text.slice(0, this.cursor) + text + this.text.slice(this.cursor);
    this.cursor += text.length;
  }

  backspace(): void {
    if (this.cursor === 0) return;
    const from = this.prevBoundary(this.cursor);
    this.text = this.text.slice(0, from) + this.text.slice(this.cursor);
    this.cursor = from;
  }

  deleteForward(): void {
    if (this.cursor >= this.text.length) return;
    this.text = this.text.slice(0, this.cursor) + this.text.slice(this.nextBoundary(this.cursor));
  }

  left(): void {
    this.cursor = this.prevBoundary(this.cursor);
  }

  right(): void {
    this.cursor = this.nextBoundary(this.cursor);
  }

  /** Start of the current line (Home, Ctrl+A). */
  home(): void {
    this.cursor = this.lineStart(this.cursor);
  }

  /** End of the current line (End, Ctrl+E). */
  end(): void {
    this.cursor = this.lineEnd(this.cursor);
  }

  /** Deletes from the start of the current line to the cursor (Ctrl+U). */
  killToLineStart(): void {
    const from = this.lineStart(this.cursor);
    this.text = this.text.slice(0, from) + this.text.slice(this.cursor);
    this.cursor = from;
  }

  /** Deletes from the cursor to the end of the current line (Ctrl+K). */
  killToLineEnd(): void {
    this.text = this.text.slice(0, this.cursor) + this.text.slice(this.lineEnd(this.cursor));
  }

  /** Deletes the word before the cursor, and the spaces after it (Ctrl+W, Alt+Backspace). */
  deleteWordBack(): void {
    const from = this.wordStart(this.cursor);
    this.text = this.text.slice(0, from) + this.text.slice(this.cursor);
    this.cursor = from;
  }

  wordLeft(): void {
    this.cursor = this.wordStart(this.cursor);
  }

  wordRight(): void {
    let i = this.cursor;
    while (i < this.text.length && /\s/.test(this.text[i]!)) i++;
    while (i < this.text.length && !/\s/.test(this.text[i]!)) i++;
    this.cursor = i;
  }

  get onFirstLine(): boolean {
    return !this.text.slice(0, this.cursor).includes('\n');
  }

  get onLastLine(): boolean {
    return !this.text.slice(this.cursor).includes('\n');
  }

  /** Moves to the line above or below, keeping the column where that line is long enough. */
  verticalMove(direction: -1 | 1): void {
    const start = this.lineStart(this.cursor);
    const column = this.cursor - start;
    if (direction < 0) {
      if (start === 0) return;
      const prevStart = this.lineStart(start - 1);
      this.cursor = Math.min(prevStart + column, start - 1);
    } else {
      const end = this.lineEnd(this.cursor);
      if (end >= this.text.length) return;
      const nextStart = end + 1;
      this.cursor = Math.min(nextStart + column, this.lineEnd(nextStart));
    }
    this.cursor = this.snap(this.cursor);
  }

  private lineStart(at: number): number {
    return this.text.lastIndexOf('\n', at - 1) + 1;
  }

  private lineEnd(at: number): number {
    const next = this.text.indexOf('\n', at);
    return next < 0 ? this.text.length : next;
  }

  private wordStart(at: number): number {
    let i = at;
    while (i > 0 && /\s/.test(this.text[i - 1]!)) i--;
    while (i > 0 && !/\s/.test(this.text[i - 1]!)) i--;
    return i;
  }

  /** Where the character before `at` starts: a whole grapheme (an emoji with its modifiers, a letter with its accents). */
  private prevBoundary(at: number): number {
    if (at <= 0) return 0;
    let last = 0;
    for (const { index } of graphemes.segment(this.text.slice(0, at))) last = index;
    return last;
  }

  /** Where the character at `at` ends. */
  private nextBoundary(at: number): number {
    if (at >= this.text.length) return this.text.length;
    const first = graphemes.segment(this.text.slice(at))[Symbol.iterator]().next().value;
    return at + (first?.segment.length ?? 1);
  }

  /** Never leave the cursor inside a grapheme. */
  private snap(at: number): number {
    if (at <= 0 || at >= this.text.length) return at;
    let start = 0;
    for (const { index } of graphemes.segment(this.text)) {
      if (index > at) break;
      start = index;
    }
    return start;
  }
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
