import { describe, expect, it } from 'vitest';
import { decodeString, decodeText, encodeText, keepFinalNewline } from '../../../src/tools/edit/file-text.js';
import { ToolError } from '../../../src/tools/types.js';

const bytes = (...b: number[]) => Uint8Array.from(b);
const utf8 = (s: string) => new TextEncoder().encode(s);

describe('decodeText / encodeText', () => {
  it('round-trips LF, CRLF, BOM and a missing final newline', () => {
    for (const raw of ['a\nb\n', 'a\r\nb\r\n', '\uFEFFa\r\nb', 'a', '']) {
      const decoded = decodeText(utf8(raw), 'f');
      expect(decoded.text).not.toContain('\r\n');
      expect(encodeText(decoded.text, decoded)).toBe(raw);
    }
  });

  it('reports what it found', () => {
    expect(decodeText(utf8('\uFEFFx\r\ny'), 'f')).toEqual({
      text: 'x\ny',
      bom: true,
      eol: '\r\n',
      finalNewline: false,
    });
  });

  it('writes a mixed file back with its majority ending', () => {
    const decoded = decodeString('a\r\nb\r\nc\nd\r\n');
    expect(decoded.eol).toBe('\r\n');
    expect(encodeText(decoded.text, decoded)).toBe('a\r\nb\r\nc\r\nd\r\n');
  });

  it('keeps the final newline as the original had it', () => {
    const withNl = decodeString('a\n');
    const withoutNl = decodeString('a');
    expect(keepFinalNewline('b', withNl)).toBe('b\n');
    expect(keepFinalNewline('b\n', withoutNl)).toBe('b');
    expect(keepFinalNewline('b\n', decodeString(''))).toBe('b\n');
  });

  it('refuses binary, UTF-16 and invalid UTF-8', () => {
    expect(() => decodeText(bytes(0x7f, 0x45, 0x4c, 0x46, 0, 1), 'a.out')).toThrow(/binary/);
    expect(() => decodeText(bytes(0xff, 0xfe, 0x61, 0), 'w.txt')).toThrow(/UTF-16/);
    expect(() => decodeText(bytes(0x61, 0xc3, 0x28), 'l.txt')).toThrow(/not valid UTF-8/);
    expect(() => decodeText(bytes(0xc3, 0x28), 'l.txt')).toThrow(ToolError);
  });
});
