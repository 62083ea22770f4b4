import { readFile } from 'node:fs/promises';
import {
  decodeFile,
  describeUnencodable,
  ENCODING_LABELS,
  encodeString,
  isUnencodable,
  type TextEncoding,
  whyNotText,
} from '../fs/text-encoding.js';
import { ToolError } from '../types.js';

/**
 * A text file as the editor sees it: LF text to match against, plus what it takes to write the
 * file back byte for byte the way it was (encoding, BOM, line ending, final newline).
 */
export interface DecodedText {
  /** Content without BOM, with CRLF turned into LF. */
  text: string;
  bom: boolean;
  eol: '\n' | '\r\n';
  finalNewline: boolean;
  encoding: TextEncoding;
}

/** Decodes file bytes for editing; throws ToolError for binary content or an encoding it cannot write back. */
export function decodeText(bytes: Uint8Array, shown: string): DecodedText {
  const file = decodeFile(bytes);
  if (file.kind !== 'text') throw new ToolError(`Cannot edit ${shown}: ${whyNotText(file)}`);
  return { ...decodeString(file.text, file.bom), encoding: file.encoding };
}

/** The string form of decodeText, for text already in memory (a BOM character is recognised). */
export function decodeString(raw: string, bom = false): Omit<DecodedText, 'encoding'> {
  let body = raw;
  if (!bom && body.startsWith('\uFEFF')) {
    body = body.slice(1);
    bom = true;
  }
  const crlf = body.split('\r\n').length - 1;
  const lf = body.split('\n').length - 1;
  // Mixed files are written back with whichever ending most of their lines used.
  const eol = crlf > 0 && crlf >= lf - crlf ? '\r\n' : '\n';
  const text = toLf(body);
  return { text, bom, eol, finalNewline: text.endsWith('\n') };
}

/**
 * Turns edited LF text back into file content shaped like the original: its line ending, its BOM,
 * and its final newline present or absent (an edit near the end should not flip that by accident).
 */
export function encodeText(text: string, original: Omit<DecodedText, 'encoding'>): string {
  let body = keepFinalNewline(text, original);
  if (original.eol === '\r\n') body = body.replace(/\n/g, '\r\n');
  return (original.bom ? '\uFEFF' : '') + body;
}

/** The edited LF text with the original's final newline present or absent; an empty original imposes nothing. */
export function keepFinalNewline(text: string, original: Omit<DecodedText, 'encoding'>): string {
  if (original.text === '' || text === '') return text;
  if (original.finalNewline && !text.endsWith('\n')) return `${text}\n`;
  if (!original.finalNewline && text.endsWith('\n')) return text.slice(0, -1);
  return text;
}

/** CRLF to LF, for file text and for the model's strings alike. */
export function toLf(text: string): string {
  return text.replace(/\r\n/g, '\n');
}

export function countLines(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

export async function readDecoded(abs: string, shown: string): Promise<DecodedText> {
  return decodeText(await readFile(abs), shown);
}

/**
 * File content as bytes in its encoding, or a ToolError naming the characters that encoding cannot
 * hold and the way out (nothing is written then).
 */
export function contentBytes(content: string, encoding: TextEncoding, cannot: string): Buffer {
  const bytes = encodeString(content, encoding);
  if (!isUnencodable(bytes)) return bytes;
  throw new ToolError(
    `${cannot}: it is ${ENCODING_LABELS[encoding]} text, which has no ${describeUnencodable(bytes)}. ` +
      'Use characters it has, or pass encoding "utf-8" to convert the file to UTF-8.',
  );
}

/**
 * The BOM a file gets when written in `encoding`: UTF-16 always has one, a file kept in its
 * encoding keeps what it had, and one converted to UTF-8 or Windows-1252 gets none.
 */
export function bomFor(encoding: TextEncoding, original?: { encoding: TextEncoding; bom: boolean }): boolean {
  if (encoding === 'utf-16le' || encoding === 'utf-16be') return true;
  return original?.encoding === encoding && original.bom;
}

/** What a tool's result says of the encoding written: nothing for UTF-8 as it was. */
export function writtenAs(encoding: TextEncoding, was?: TextEncoding): string {
  if (was !== undefined && was !== encoding) {
    return ` (converted from ${ENCODING_LABELS[was]} to ${ENCODING_LABELS[encoding]})`;
  }
  return encoding === 'utf-8' ? '' : ` in ${ENCODING_LABELS[encoding]}`;
}
