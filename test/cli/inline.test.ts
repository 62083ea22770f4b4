import { describe, expect, it } from 'vitest';
import { callRow } from '../../src/cli/render.js';
import { inline } from '../../src/cli/sanitize.js';

describe('names on one line', () => {
  it('spells newlines, tabs and control characters the way the terminal shows them', () => {
    expect(inline('odd\n\x1b[2Jname\t.txt')).toBe('odd\\n\\e[2Jname\\t.txt');
    expect(inline('plain.txt')).toBe('plain.txt');
  });

  it('keeps a tool row to one row, with or without the tool’s label', () => {
    const call = { id: 'c1', name: 'read_file', arguments: JSON.stringify({ path: 'a\nb\x07.txt' }) };
    expect(callRow({ call })).toBe('read_file a\\nb\\a.txt');
    expect(callRow({ call, label: 'read_file a\nb\x07.txt' })).toBe('read_file a\\nb\\a.txt');
  });
});
