/**
 * Terminal column counts, so the line editor, the spinner and the reasoning fold know where lines
 * wrap. Widths come from `string-width` (grapheme clusters, emoji presentation, East Asian width),
 * which a hand-made table got wrong for common symbols (✅ ❌ 🚀 ⚠️) and broke redraws.
 */
import stringWidth from 'string-width';

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** Columns a string takes on one line, escape sequences left out. Control characters count 0: callers show them otherwise. */
export function textWidth(text: string): number {
  return stringWidth(text);
}

/** The string split into what a person sees as characters (an emoji with its modifiers is one). */
function splitGraphemes(text: string): string[] {
  return Array.from(graphemes.segment(text), (s) => s.segment);
}

/** At most `max` columns of `text`, with `…` where it was cut. */
export function truncateToWidth(text: string, max: number): string {
  if (textWidth(text) <= max) return text;
  let out = '';
  let width = 0;
  for (const g of splitGraphemes(text)) {
    const w = textWidth(g);
    if (width + w > max - 1) break;
    out += g;
    width += w;
  }
  return `${out}…`;
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
    for (const g of splitGraphemes(stripAnsi(text))) {
      if (g === '\n' || g === '\r\n') {
        this.rows++;
        this.col = 0;
      } else if (g === '\r') {
        this.col = 0;
      } else if (g === '\t') {
        this.col = Math.min(this.columns, (Math.floor(this.col / 8) + 1) * 8);
      } else {
        const width = textWidth(g);
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
