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
      encoding: 'utf-8',
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

  it('refuses binary, UTF-32 and broken UTF-16, naming the encoding', () => {
    expect(() => decodeText(bytes(0x7f, 0x45, 0x4c, 0x46, 0, 1), 'a.out')).toThrow(/binary/);
    expect(() => decodeText(bytes(0xff, 0xfe, 0, 0, 0x61, 0, 0, 0), 'w.txt')).toThrow(/UTF-32LE text/);
    expect(() => decodeText(bytes(0xff, 0xfe, 0x61, 0, 0x62), 'w.txt')).toThrow(
      'Cannot edit w.txt: it starts with a UTF-16LE byte-order mark but is not valid UTF-16LE.',
    );
    expect(() => decodeText(bytes(0xc3, 0x28, 1, 2, 3, 4, 5, 6), 'l.bin')).toThrow(ToolError);
  });

  it('reads UTF-16 by its BOM and what is not UTF-8 as Windows-1252, and writes each back as it was', () => {
    const utf16 = Buffer.from('\uFEFFa\r\nb\r\n', 'utf16le');
    const decoded = decodeText(utf16, 'w.txt');
    expect(decoded).toMatchObject({ text: 'a\nb\n', encoding: 'utf-16le', bom: true, eol: '\r\n' });
    expect(encodeText(decoded.text, decoded)).toBe('\uFEFFa\r\nb\r\n');
    expect(decodeText(bytes(0x61, 0xc3, 0x28), 'l.txt')).toMatchObject({
      text: 'a\u00c3(',
      encoding: 'windows-1252',
    });
  });
});
