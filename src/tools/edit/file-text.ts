import { readFile } from 'node:fs/promises';
import { ToolError } from '../types.js';

/**
 * A text file as the editor sees it: LF text to match against, plus what it takes to write the
 * file back byte for byte the way it was (BOM, line ending, final newline).
 */
export interface DecodedText {
  /** Content without BOM, with CRLF turned into LF. */
  text: string;
  bom: boolean;
  eol: '\n' | '\r\n';
  finalNewline: boolean;
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];
const SNIFF_BYTES = 8192;

/** Decodes file bytes for editing; throws ToolError for binary, UTF-16 or invalid UTF-8 content. */
export function decodeText(bytes: Uint8Array, shown: string): DecodedText {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    throw new ToolError(`Cannot edit ${shown}: it is UTF-16 text; only UTF-8 files can be edited.`);
  }
  if (bytes.subarray(0, SNIFF_BYTES).includes(0)) {
    throw new ToolError(`Cannot edit ${shown}: it looks like a binary file, not text.`);
  }
  const bom = UTF8_BOM.every((b, i) => bytes[i] === b);
  let raw: string;
  try {
    raw = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bom ? bytes.subarray(3) : bytes);
  } catch {
    throw new ToolError(
      `Cannot edit ${shown}: it is not valid UTF-8 text (it may be binary or use another encoding).`,
    );
  }
  return decodeString(raw, bom);
}

/** The string form of decodeText, for text already in memory (a BOM character is recognised). */
export function decodeString(raw: string, bom = false): DecodedText {
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
export function encodeText(text: string, original: DecodedText): string {
  let body = keepFinalNewline(text, original);
  if (original.eol === '\r\n') body = body.replace(/\n/g, '\r\n');
  return (original.bom ? '\uFEFF' : '') + body;
}

/** The edited LF text with the original's final newline present or absent; an empty original imposes nothing. */
export function keepFinalNewline(text: string, original: DecodedText): string {
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
