import { beforeAll, describe, expect, it } from 'vitest';
import { LineBuffer } from '../../src/cli/repl/line-buffer.js';
import { loadTextWidth, RowCounter, textWidth, truncateToWidth } from '../../src/cli/text-width.js';

// Runs first, while the exact measure is not loaded yet (this file's module is its own).
describe('textWidth before the exact measure is loaded', () => {
  it('is exact for ASCII and never narrower than the text for the rest', () => {
    expect(textWidth('plain text')).toBe(10);
    expect(textWidth('\x1b[31mred\x1b[0m')).toBe(3);
    for (const [text, exact] of [
      ['日本語', 6],
      ['ok ✅', 5],
      ['é', 1],
      ['👍🏽', 2],
    ] as const) {
      expect(textWidth(text)).toBeGreaterThanOrEqual(exact);
    }
  });

  it('cuts ASCII exactly and other text no later than its real width allows', () => {
    expect(truncateToWidth('abcdefghij', 5)).toBe('abcd…');
    expect(truncateToWidth('short', 10)).toBe('short');
    expect(truncateToWidth('日本語日本語', 7)).toBe('日本語…');
  });
});

// Expected widths are what terminals following Unicode's East Asian Width and emoji presentation
// (UTS #11, UTS #51) draw: xterm, VTE, kitty, iTerm2.
describe('textWidth', () => {
  beforeAll(() => loadTextWidth());

  it.each([
    ['✅', 2],
    ['❌', 2],
    ['🚀', 2],
    ['⚠️', 2],
    ['👍🏽', 2],
    ['👨‍👩‍👧', 2],
    ['🇫🇷', 2],
    ['日本語', 6],
    ['é', 1],
    ['e\u0301', 1],
    ['a\u200bb', 2],
    ['\x1b[31mred\x1b[0m', 3],
    ['plain', 5],
  ])('%s is %i columns', (text, width) => {
    expect(textWidth(text)).toBe(width);
  });

  it('cuts to a width without splitting a character', () => {
    expect(truncateToWidth('ok ✅ done', 6)).toBe('ok ✅…');
    expect(truncateToWidth('👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧', 5)).toBe('👨‍👩‍👧👨‍👩‍👧…');
    expect(truncateToWidth('short', 10)).toBe('short');
  });
});

describe('RowCounter', () => {
  beforeAll(() => loadTextWidth());

  it('wraps wide characters the way a terminal does', () => {
    const rows = new RowCounter(10);
    rows.add('🚀🚀🚀🚀🚀'); // exactly 10 columns: still on the first row
    expect(rows.rows).toBe(0);
    rows.add('✅'); // does not fit: wraps
    expect(rows.rows).toBe(1);
    rows.add('\n');
    expect(rows.rows).toBe(2);
  });
});

describe('LineBuffer', () => {
  it('moves over and deletes whole graphemes', () => {
    const buffer = new LineBuffer();
    buffer.set('a👨‍👩‍👧b🇫🇷');
    buffer.backspace();
    expect(buffer.text).toBe('a👨‍👩‍👧b');
    buffer.left();
    buffer.backspace();
    expect(buffer.text).toBe('ab');
    expect(buffer.cursor).toBe(1);
    buffer.set('e\u0301x');
    buffer.home();
    buffer.right();
    expect(buffer.cursor).toBe(2);
    buffer.deleteForward();
    expect(buffer.text).toBe('e\u0301');
  });

  it('keeps the column on vertical moves without landing inside an emoji', () => {
    const buffer = new LineBuffer();
    buffer.set('👍🏽👍🏽\nabcdef');
    buffer.verticalMove(-1);
    // Column 6 in code units of the lower line falls inside the upper line's second emoji: snapped to its start.
    expect([0, 4, 8]).toContain(buffer.cursor);
  });
});
