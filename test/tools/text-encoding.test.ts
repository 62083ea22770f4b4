import { describe, expect, it } from 'vitest';
import {
  decodeFile,
  encodeString,
  isUnencodable,
  parseEncoding,
  sniffEncoding,
} from '../../src/tools/fs/text-encoding.js';

const all256 = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

describe('text encodings', () => {
  it('reads every byte from 0x80 as Windows-1252, each its own character, and writes it back', () => {
    const seen = new Set<string>();
    for (const byte of all256.subarray(0x80)) {
      const bytes = Buffer.from([0x63, 0x61, 0x66, byte, 0x0a]);
      const file = decodeFile(bytes);
      expect(file, `byte ${byte}`).toMatchObject({ kind: 'text', encoding: 'windows-1252' });
      const { text } = file as { text: string };
      expect(encodeString(text, 'windows-1252')).toEqual(bytes);
      seen.add(text[3]!);
    }
    expect(seen.size).toBe(128);
    // The WHATWG table, which Node 20.18.3 and later's TextDecoder does not follow (nodejs/node#60888).
    const text = (
      decodeFile(Buffer.from([0x61, 0x80, 0x93, 0x94, 0x9d, 0x9f, 0xa0, 0xe9])) as { text: string }
    ).text;
    expect(text).toBe('a€“”\u009dŸ\u00a0é');
  });

  it('tells text from binary by BOM, NUL bytes and control characters', () => {
    expect(sniffEncoding(Buffer.from('\ufeffx'))).toEqual({ kind: 'text', encoding: 'utf-8', bom: true });
    expect(sniffEncoding(Buffer.from('\ufeffx', 'utf16le'))).toEqual({
      kind: 'text',
      encoding: 'utf-16le',
      bom: true,
    });
    expect(sniffEncoding(Buffer.from([0xfe, 0xff, 0, 0x78]))).toEqual({
      kind: 'text',
      encoding: 'utf-16be',
      bom: true,
    });
    expect(sniffEncoding(Buffer.from([0xff, 0xfe, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0]))).toEqual({
      kind: 'binary',
    });
    expect(sniffEncoding(Buffer.from([0x61, 0, 0x62]))).toEqual({ kind: 'binary' });
    // A Latin-1 page with a form feed and an ANSI colour is text; one with many control bytes is not.
    expect(decodeFile(Buffer.from('caf\xe9\f\x1b[1mbold\x1b[0m\n', 'latin1'))).toMatchObject({
      kind: 'text',
      text: 'café\f\x1b[1mbold\x1b[0m\n',
    });
    expect(decodeFile(Buffer.from('\xe9\x01\x02\x03\x04\x05 some text', 'latin1'))).toEqual({
      kind: 'binary',
    });
    // An old DOS file's end-of-file mark alone does not make it binary.
    expect(decodeFile(Buffer.from('caf\xe9\r\n\x1a', 'latin1'))).toMatchObject({ kind: 'text' });
  });

  it('encodes UTF-16 in both byte orders and names what Windows-1252 cannot hold', () => {
    expect(encodeString('\ufeffA€', 'utf-16le')).toEqual(Buffer.from([0xff, 0xfe, 0x41, 0, 0xac, 0x20]));
    expect(encodeString('\ufeffA€', 'utf-16be')).toEqual(Buffer.from([0xfe, 0xff, 0, 0x41, 0x20, 0xac]));
    const missing = encodeString('ok\nα β α\nγ δ', 'windows-1252');
    expect(isUnencodable(missing) && missing).toEqual({ chars: ['α', 'β', 'γ'], line: 2 });
  });

  it('knows the usual names of each encoding', () => {
    expect(
      ['UTF8', 'utf-8', 'Latin-1', 'ISO-8859-1', 'cp1252', 'UTF-16', 'utf16be'].map(parseEncoding),
    ).toEqual(['utf-8', 'utf-8', 'windows-1252', 'windows-1252', 'windows-1252', 'utf-16le', 'utf-16be']);
    expect(parseEncoding('shift_jis')).toBeUndefined();
  });
});
