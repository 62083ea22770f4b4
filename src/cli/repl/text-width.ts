// Terminal column counts, so the line editor and the reasoning collapse know where lines wrap.

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** Ranges of code points a terminal draws two columns wide (East Asian wide and emoji). */
const WIDE: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x20000, 0x3fffd],
];

/** Ranges drawn in no column of their own: combining marks, zero-width spaces and joiners, variation selectors. */
const ZERO: ReadonlyArray<readonly [number, number]> = [
  [0x0300, 0x036f],
  [0x200b, 0x200f],
  [0x20d0, 0x20ff],
  [0xfe00, 0xfe0f],
];

function inRanges(cp: number, ranges: ReadonlyArray<readonly [number, number]>): boolean {
  return ranges.some(([from, to]) => cp >= from && cp <= to);
}

/** Columns one printable code point takes. Control characters count 0: callers show them otherwise. */
export function charWidth(cp: number): number {
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (inRanges(cp, ZERO)) return 0;
  return inRanges(cp, WIDE) ? 2 : 1;
}

/** Columns a string takes on one line, escape sequences left out. */
export function textWidth(text: string): number {
  let width = 0;
  for (const ch of stripAnsi(text)) width += charWidth(ch.codePointAt(0)!);
  return width;
}

/** The usable width of a terminal; 80 when it does not say (a pty whose size was never set). */
export function columnsOf(stream: { columns?: number }): number {
  return stream.columns && stream.columns > 0 ? stream.columns : 80;
}

/**
 * Follows the cursor through text written at a terminal, counting the rows it moves down,
 * wraps included, so the text can be erased again later.
 */
export class RowCounter {
  rows = 0;
  private col = 0;

  constructor(private readonly columns: number) {}

  get atLineStart(): boolean {
    return this.col === 0;
  }

  add(text: string): void {
    for (const ch of stripAnsi(text)) {
      if (ch === '\n') {
        this.rows++;
        this.col = 0;
      } else if (ch === '\r') {
        this.col = 0;
      } else if (ch === '\t') {
        this.col = Math.min(this.columns, (Math.floor(this.col / 8) + 1) * 8);
      } else {
        const width = charWidth(ch.codePointAt(0)!);
        // A terminal wraps lazily: only the character that no longer fits moves to the next row.
        if (this.col + width > this.columns) {
          this.rows++;
          this.col = 0;
        }
        this.col += width;
      }
    }
  }
}
