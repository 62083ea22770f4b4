import { z } from 'zod';

/**
 * The encodings text files are read and written in, and how a file's is told: a byte-order mark
 * (UTF-8, UTF-16LE/BE), else UTF-8 when the bytes are valid UTF-8, else Windows-1252 (the
 * superset of Latin-1 that Windows and most legacy Western text use) unless control bytes say the
 * file is binary.
 *
 * Why not a detector library: chardet 2.2 and jschardet 4.1 both misjudge short files, which are
 * most of what an agent edits ("café" in Latin-1 comes back as ASCII from chardet; a Windows-1252
 * comment with curly quotes as UTF-16LE from jschardet, and a French Latin-1 sentence as
 * MacCyrillic), and they only detect: writing back would need iconv-lite as well. The fixed
 * fallback is predictable, and lossless: Windows-1252 gives each of the 256 bytes its own
 * character (the five it leaves undefined map to the C1 controls of the same number, as in the
 * WHATWG table), and `encodeString` maps each back, so what an edit does not touch keeps its bytes
 * even in a file that was really in another 8-bit encoding. The table is ours because Node has no
 * encoder for it, and its TextDecoder('windows-1252') decodes as ISO-8859-1 since 20.18.3
 * (nodejs/node#60888: 0x80 gives U+0080, not the euro sign).
 */

export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';

/** The encoding as the model and people are told it. */
export const ENCODING_LABELS: Record<TextEncoding, string> = {
  'utf-8': 'UTF-8',
  'utf-16le': 'UTF-16LE',
  'utf-16be': 'UTF-16BE',
  'windows-1252': 'Windows-1252',
};

/** Names a model or a person may give for an encoding (compared lower-case, without spaces). */
const ALIASES: Record<string, TextEncoding> = {
  'utf-8': 'utf-8',
  utf8: 'utf-8',
  'utf-16': 'utf-16le',
  utf16: 'utf-16le',
  'utf-16le': 'utf-16le',
  utf16le: 'utf-16le',
  'utf-16be': 'utf-16be',
  utf16be: 'utf-16be',
  'windows-1252': 'windows-1252',
  windows1252: 'windows-1252',
  cp1252: 'windows-1252',
  'latin-1': 'windows-1252',
  latin1: 'windows-1252',
  'iso-8859-1': 'windows-1252',
  'iso8859-1': 'windows-1252',
};

export function parseEncoding(name: string): TextEncoding | undefined {
  return ALIASES[name.toLowerCase().replace(/[\s_]/g, '')];
}

/**
 * The write tools' `encoding` option: the file's own by default. Unlisted (see the registry), since
 * it is needed only when a tool's result or error names it.
 */
export const encodingParameter = z
  .string()
  .transform((name, ctx) => {
    const encoding = parseEncoding(name);
    if (encoding) return encoding;
    ctx.addIssue({
      code: 'custom',
      message: `Unknown encoding ${JSON.stringify(name)}; use utf-8, windows-1252 (latin-1), utf-16le or utf-16be.`,
    });
    return z.NEVER;
  })
  .optional()
  .meta({ unlisted: true });

/** Bytes looked at to tell binary from text. */
export const SNIFF_BYTES = 8192;

/** What the start of a file says, before its whole content is decoded. */
export type Sniffed =
  | { kind: 'text'; encoding: 'utf-8' | 'utf-16le' | 'utf-16be'; bom: boolean }
  | { kind: 'binary' }
  | { kind: 'unsupported'; label: string };

/**
 * Reads a file's first bytes: a BOM names the encoding; without one a NUL byte means binary, and
 * anything else is tried as UTF-8 first (see `fallbackFor` when that fails).
 */
export function sniffEncoding(head: Uint8Array): Sniffed {
  const [a, b, c, d] = head;
  if (a === 0xff && b === 0xfe && c === 0 && d === 0) return { kind: 'unsupported', label: 'UTF-32LE' };
  if (a === 0 && b === 0 && c === 0xfe && d === 0xff) return { kind: 'unsupported', label: 'UTF-32BE' };
  if ((a === 0xff && b === 0xfe) || (a === 0xfe && b === 0xff)) {
    const encoding = a === 0xff ? 'utf-16le' : 'utf-16be';
    const sample = new TextDecoder(encoding).decode(head.subarray(0, SNIFF_BYTES & ~1));
    return looksBinary(sample) ? { kind: 'binary' } : { kind: 'text', encoding, bom: true };
  }
  if (head.subarray(0, SNIFF_BYTES).includes(0)) return { kind: 'binary' };
  return { kind: 'text', encoding: 'utf-8', bom: a === 0xef && b === 0xbb && c === 0xbf };
}

/** What a file that is not valid UTF-8 is read as, judged on its first bytes. */
export function fallbackFor(head: Uint8Array): 'windows-1252' | 'binary' {
  return looksBinary(decodeWindows1252(head.subarray(0, SNIFF_BYTES))) ? 'binary' : 'windows-1252';
}

/**
 * Text has hardly any control characters beyond tab, line breaks, form feed and escape; in binary
 * data about one byte in eight is one. A NUL anywhere settles it; a few strays (a DOS end-of-file
 * mark, a backspace) do not make a short file binary.
 */
function looksBinary(sample: string): boolean {
  let controls = 0;
  for (let i = 0; i < sample.length; i += 1) {
    const code = sample.charCodeAt(i);
    if (code === 0) return true;
    if ((code < 0x20 && !TEXT_CONTROLS.has(code)) || code === 0x7f || (code >= 0x80 && code < 0xa0)) {
      controls += 1;
    }
  }
  return controls > 4 && controls * 50 > sample.length;
}

const TEXT_CONTROLS = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1b]);

/** A whole file's text, or why it has none. */
export type DecodedFile =
  | { kind: 'text'; encoding: TextEncoding; bom: boolean; text: string }
  | { kind: 'binary' }
  | { kind: 'unsupported'; label: string }
  | { kind: 'invalid'; encoding: TextEncoding };

/**
 * Decodes a whole file's bytes (BOM removed from `text`) in the encoding they are found to be in;
 * `partial` when they are only the file's start, which may end inside a character.
 */
export function decodeFile(bytes: Uint8Array, options: { partial?: boolean } = {}): DecodedFile {
  const sniffed = sniffEncoding(bytes);
  if (sniffed.kind !== 'text') return sniffed;
  const { encoding, bom } = sniffed;
  const body = bom ? bytes.subarray(encoding === 'utf-8' ? 3 : 2) : bytes;
  try {
    const decoder = new TextDecoder(encoding, { fatal: true, ignoreBOM: true });
    const text = decoder.decode(body, { stream: options.partial === true });
    return { kind: 'text', encoding, bom, text };
  } catch {
    // A BOM that promised UTF-16 over bytes that are not is not guessed at further.
    if (encoding !== 'utf-8') return { kind: 'invalid', encoding };
  }
  if (fallbackFor(bytes) === 'binary') return { kind: 'binary' };
  return { kind: 'text', encoding: 'windows-1252', bom: false, text: decodeWindows1252(bytes) };
}

/** Why a file has no text, as the end of "Cannot read x: ..."; `size` is said for a binary file. */
export function whyNotText(file: Exclude<DecodedFile, { kind: 'text' }>, size?: string): string {
  switch (file.kind) {
    case 'binary':
      return `it looks like a binary file${size ? ` (${size})` : ''}, not text.`;
    case 'unsupported':
      return `it is ${file.label} text, which Hearth does not read or write; convert it to UTF-8 first (iconv in the shell).`;
    case 'invalid': {
      const label = ENCODING_LABELS[file.encoding];
      return `it starts with a ${label} byte-order mark but is not valid ${label}.`;
    }
  }
}

/** A decoder for one encoding that may be fed a file chunk by chunk; UTF decoders throw a TypeError on invalid input. */
export function streamDecoder(encoding: TextEncoding): {
  decode(chunk?: Uint8Array, options?: { stream: boolean }): string;
} {
  if (encoding === 'windows-1252') return { decode: (chunk) => (chunk ? decodeWindows1252(chunk) : '') };
  return new TextDecoder(encoding, { fatal: true });
}

/** The characters Windows-1252 puts at 0x80-0x9F; the rest of its bytes are the same code points. */
const WINDOWS_1252_HIGH =
  '\u20AC\u0081\u201A\u0192\u201E\u2026\u2020\u2021\u02C6\u2030\u0160\u2039\u0152\u008D\u017D\u008F' +
  '\u0090\u2018\u2019\u201C\u201D\u2022\u2013\u2014\u02DC\u2122\u0161\u203A\u0153\u009D\u017E\u0178';

const WINDOWS_1252_BYTES = new Map<number, number>(
  [...WINDOWS_1252_HIGH].map((ch, i) => [ch.charCodeAt(0), 0x80 + i]),
);

function decodeWindows1252(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString('latin1')
    .replace(/[\u0080-\u009f]/g, (ch) => WINDOWS_1252_HIGH[ch.charCodeAt(0) - 0x80]!);
}

/** Characters an encoding cannot hold: the first few distinct ones and the line of the first. */
export interface Unencodable {
  chars: string[];
  line: number;
}

/** The bytes of `text` (a leading U+FEFF becomes the BOM), or the characters the encoding lacks. */
export function encodeString(text: string, encoding: TextEncoding): Buffer | Unencodable {
  switch (encoding) {
    case 'utf-8':
      return Buffer.from(text, 'utf8');
    case 'utf-16le':
      return Buffer.from(text, 'utf16le');
    case 'utf-16be':
      return Buffer.from(text, 'utf16le').swap16();
    case 'windows-1252':
      return encodeWindows1252(text);
  }
}

function encodeWindows1252(text: string): Buffer | Unencodable {
  const out = Buffer.allocUnsafe(text.length);
  const missing: string[] = [];
  let length = 0;
  let lines = 1;
  let line = 0;
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    const byte = code < 0x80 || (code >= 0xa0 && code <= 0xff) ? code : WINDOWS_1252_BYTES.get(code);
    if (code === 0x0a) lines += 1;
    if (byte !== undefined) {
      out[length] = byte;
      length += 1;
    } else if (missing.length < 3 && !missing.includes(ch)) {
      if (missing.length === 0) line = lines;
      missing.push(ch);
    }
  }
  return missing.length > 0 ? { chars: missing, line } : out.subarray(0, length);
}

export function isUnencodable(value: Buffer | Unencodable): value is Unencodable {
  return !Buffer.isBuffer(value);
}

/** `"→" and "✓" (line 3)`, for a message that says why a write was refused. */
export function describeUnencodable(missing: Unencodable): string {
  const quoted = missing.chars.map((ch) => JSON.stringify(ch));
  const list = quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
  return `${list} (line ${missing.line})`;
}
