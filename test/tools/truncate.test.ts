import { describe, expect, it } from 'vitest';
import { formatBytes, splitLines, truncateHead, truncateMiddle } from '../../src/tools/truncate.js';

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n');

describe('truncateHead', () => {
  it('returns short text untouched', () => {
    const r = truncateHead('a\nb\n', { maxLines: 10, maxBytes: 100 });
    expect(r).toMatchObject({ text: 'a\nb\n', truncated: false, totalLines: 2, truncatedBy: null });
  });

  it('keeps whole lines up to the line limit', () => {
    const r = truncateHead(numbered(100), { maxLines: 3, maxBytes: 10_000 });
    expect(r.text).toBe('line 1\nline 2\nline 3');
    expect(r).toMatchObject({ truncated: true, truncatedBy: 'lines', keptLines: 3, totalLines: 100 });
  });

  it('keeps whole lines up to the byte limit', () => {
    const r = truncateHead(numbered(100), { maxLines: 1000, maxBytes: 19 });
    expect(r.text).toBe('line 1\nline 2');
    expect(r.keptBytes).toBeLessThanOrEqual(19);
    expect(r.truncatedBy).toBe('bytes');
  });

  it('keeps the start of a first line that alone is too long, without splitting a character', () => {
    const r = truncateHead(`${'é'.repeat(100)}\nnext`, { maxLines: 10, maxBytes: 11 });
    expect(r.text).toBe('é'.repeat(5));
    expect(r.partialLine).toBe(true);
  });
});

describe('truncateMiddle', () => {
  it('returns short text untouched', () => {
    expect(truncateMiddle('hello', 100)).toEqual({
      text: 'hello',
      truncated: false,
      cutChars: 0,
      cutLines: 0,
    });
  });

  it('keeps head and tail and says how much was cut', () => {
    const text = numbered(5000);
    const r = truncateMiddle(text, 2000);
    expect(r.truncated).toBe(true);
    expect(r.text.length).toBeLessThanOrEqual(2100);
    expect(r.text.startsWith('line 1\nline 2\n')).toBe(true);
    expect(r.text.endsWith('line 4999\nline 5000')).toBe(true);
    expect(r.text).toMatch(/\n\[\.\.\. [\d,]+ characters \([\d,]+ lines\) cut \.\.\.\]\n/);
    expect(r.text).toContain(`[... ${r.cutChars.toLocaleString('en-US')} characters`);
    // Snapping to line boundaries means no half lines around the note.
    const [head, tail] = r.text.split(/\n\[\.\.\..*\.\.\.\]\n/);
    expect(head?.split('\n').every((l) => /^line \d+$/.test(l))).toBe(true);
    expect(tail?.split('\n').every((l) => /^line \d+$/.test(l))).toBe(true);
    // The head keeps its own newline; the split swallowed it along with the note.
    expect(r.cutChars + (head?.length ?? 0) + (tail?.length ?? 0) + 1).toBe(text.length);
  });

  it('cuts inside one huge line and includes a hint', () => {
    const r = truncateMiddle('x'.repeat(10_000), 1000, { hint: 'use grep' });
    expect(r.text).toContain('cut; use grep ...]');
    expect(r.cutLines).toBe(0);
    expect(r.text.length).toBeLessThan(1100);
  });

  it('never splits a surrogate pair', () => {
    const r = truncateMiddle('😀'.repeat(5000), 1001);
    expect(r.text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    expect(r.text).not.toMatch(/(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });
});

describe('helpers', () => {
  it('formats byte counts', () => {
    expect(formatBytes(532)).toBe('532 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(3 * 1024 * 1024)).toBe('3.0 MB');
  });

  it('does not count a trailing newline as a line', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a\n')).toEqual(['a']);
    expect(splitLines('a\n\n')).toEqual(['a', '']);
  });
});
