/**
 * Terminal column counts, so the line editor, the spinner and the reasoning fold know where lines
 * wrap. Widths come from `string-width` (grapheme clusters, emoji presentation, East Asian width),
 * which a hand-made table got wrong for common symbols (✅ ❌ 🚀 ⚠️) and broke redraws.
 *
 * Loading `string-width` builds ICU's grapheme data and its emoji pattern: about 100 ms, more than
 * starting Node. So it is loaded only where text is measured for redrawing (`loadTextWidth`: the
 * REPL awaits it, a one-shot run at a terminal starts it); printable ASCII never needs it, and
 * until it is loaded, other text is measured generously (two columns a code point), which only
 * ever cuts a line a little early, never lets it overflow.
 */

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
/** ASCII splits into graphemes char by char (`\r\n` apart, which every caller treats alike). */
const ASCII = /^[\x00-\x7f]*$/;

let stringWidth: ((text: string) => number) | undefined;
let loading: Promise<void> | undefined;
let segmenter: Intl.Segmenter | undefined;

/** Loads the exact measure; widths are exact once it resolves. Safe to call any number of times. */
export function loadTextWidth(): Promise<void> {
  loading ??= import('string-width').then((loaded) => {
    stringWidth = loaded.default;
  });
  return loading;
}

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** Columns a string takes on one line, escape sequences left out. Control characters count 0: callers show them otherwise. */
export function textWidth(text: string): number {
  if (PRINTABLE_ASCII.test(text)) return text.length;
  if (stringWidth) return stringWidth(text);
  let width = 0;
  for (const char of stripAnsi(text)) width += char < ' ' || char === '\x7f' ? 0 : char <= '~' ? 1 : 2;
  return width;
}

/** The string split into what a person sees as characters (an emoji with its modifiers is one). */
function splitGraphemes(text: string): string[] {
  if (ASCII.test(text)) return [...text];
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  return Array.from(segmenter.segment(text), (s) => s.segment);
}

/** At most `max` columns of `text`, with `…` where it was cut. */
export function truncateToWidth(text: string, max: number): string {
  if (textWidth(text) <= max) return text;
  if (PRINTABLE_ASCII.test(text)) return `${text.slice(0, Math.max(0, max - 1))}…`;
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
