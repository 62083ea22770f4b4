import { columnsOf, textWidth } from '../text-width.js';

/** The prompt before the first line of input, and before each further line of a multi-line entry. */
export interface PromptText {
  first: string;
  rest: string;
}

/**
 * Draws the prompt and the text being edited, and redraws it in place after each change. It
 * remembers the row the cursor was left on, so a redraw can go back to the prompt's first row,
 * erase downwards and write everything again: simple, and right in any terminal that knows
 * the few VT100 moves used (cursor up/right, erase below).
 */
export class PromptView {
  /** The cursor's row after the last draw, counted from the prompt's first row. */
  private cursorRow = 0;
  private drawn = false;
  /** Where the text ended at the last draw, to put the cursor there when the entry is done. */
  private endsAtLineStart = false;

  constructor(private readonly out: NodeJS.WriteStream) {}

  draw(prompt: PromptText, text: string, cursor: number): void {
    const columns = columnsOf(this.out);
    const lines = text.split('\n');
    const beforeCursor = text.slice(0, cursor).split('\n');
    const cursorLine = beforeCursor.length - 1;
    let out = this.drawn ? `${up(this.cursorRow)}\r\x1b[J` : '\r\x1b[J';
    let row = 0;
    let cursorAt = { row: 0, col: 0 };
    let endAt = { row: 0, col: 0 };
    lines.forEach((line, i) => {
      const prefix = i === 0 ? prompt.first : prompt.rest;
      const shown = visible(line);
      const width = textWidth(prefix) + textWidth(shown);
      if (i === cursorLine) {
        const upTo = textWidth(prefix) + textWidth(visible(beforeCursor[cursorLine]!));
        cursorAt = { row: row + Math.floor(upTo / columns), col: upTo % columns };
      }
      out += prefix + shown;
      if (i < lines.length - 1) {
        out += '\r\n';
        row += Math.max(1, Math.ceil(width / columns));
        return;
      }
      // Text that ends exactly at the right margin leaves the cursor pending there; moving to
      // the next row makes where it is unambiguous.
      const exact = width > 0 && width % columns === 0;
      if (exact) out += '\r\n';
      endAt = { row: row + Math.floor(width / columns), col: width % columns };
      this.endsAtLineStart = exact;
    });
    out += `${up(endAt.row - cursorAt.row)}\r${right(cursorAt.col)}`;
    this.cursorRow = cursorAt.row;
    this.drawn = true;
    this.out.write(out);
  }

  /** Leaves the entry as it is on screen, with the cursor on the line after it. */
  finish(prompt: PromptText, text: string): void {
    this.draw(prompt, text, text.length);
    if (!this.endsAtLineStart) this.out.write('\r\n');
    this.reset();
  }

  /** Forgets the last draw: the next one starts at the cursor (after the screen was cleared, or output written). */
  reset(): void {
    this.drawn = false;
    this.cursorRow = 0;
  }
}

/** The text as drawn: a tab as spaces, other control characters in caret notation. */
function visible(line: string): string {
  return line.replace(/[\x00-\x1f\x7f]/g, (c) =>
    c === '\t' ? '    ' : c === '\x7f' ? '^?' : `^${String.fromCharCode(c.charCodeAt(0) + 64)}`,
  );
}

function up(rows: number): string {
  return rows > 0 ? `\x1b[${rows}A` : '';
}

function right(cols: number): string {
  return cols > 0 ? `\x1b[${cols}C` : '';
}
