import type { FileHandle } from 'node:fs/promises';

/**
 * Reads a table file in bounded pieces, whatever its size: the start (header and first rows), the
 * end (last rows), and the line count, exact for files up to `EXACT_COUNT_BYTES` and estimated
 * beyond from evenly spread samples. Memory stays at a few megabytes for a file of any size.
 */

/** Bytes read from each end for the rows shown and the column statistics. */
const EDGE_BYTES = 256 * 1024;
/** Files up to this size have their lines counted exactly, by one streaming pass. */
const EXACT_COUNT_BYTES = 256 * 1024 * 1024;
const COUNT_CHUNK = 4 * 1024 * 1024;
const SAMPLES = 32;
const SAMPLE_BYTES = 256 * 1024;

export interface LineCount {
  lines: number;
  exact: boolean;
}

async function readRange(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await file.read(buf, 0, length, position);
  return buf.subarray(0, bytesRead);
}

/** Counts line ends (a last line without one counts too). */
export async function countLines(
  file: FileHandle,
  size: number,
  signal?: AbortSignal,
  exactLimit = EXACT_COUNT_BYTES,
): Promise<LineCount> {
  if (size === 0) return { lines: 0, exact: true };
  const lastByte = await readRange(file, size - 1, 1);
  const unterminated = lastByte[0] === 10 ? 0 : 1;
  if (size <= exactLimit) {
    const buf = Buffer.alloc(Math.min(COUNT_CHUNK, size));
    let lines = 0;
    for (let at = 0; at < size; at += buf.length) {
      signal?.throwIfAborted();
      const { bytesRead } = await file.read(buf, 0, buf.length, at);
      lines += newlines(buf, bytesRead);
      if (bytesRead === 0) break;
    }
    return { lines: lines + unterminated, exact: true };
  }
  // Even samples across the file give the density of line ends; rows of a table vary little.
  const buf = Buffer.alloc(SAMPLE_BYTES);
  let seen = 0;
  let read = 0;
  for (let i = 0; i < SAMPLES; i++) {
    signal?.throwIfAborted();
    const at = Math.floor(((size - SAMPLE_BYTES) * i) / (SAMPLES - 1));
    const { bytesRead } = await file.read(buf, 0, SAMPLE_BYTES, at);
    seen += newlines(buf, bytesRead);
    read += bytesRead;
  }
  return { lines: Math.round((seen / read) * size), exact: false };
}

function newlines(buf: Buffer, length: number): number {
  const view = buf.subarray(0, length);
  let count = 0;
  for (let at = view.indexOf(10); at >= 0; at = view.indexOf(10, at + 1)) count++;
  return count;
}

/** The text of the first `EDGE_BYTES`, cut after the last whole line (unless the file is smaller). */
export async function headText(file: FileHandle, size: number): Promise<string> {
  const buf = await readRange(file, 0, Math.min(EDGE_BYTES, size));
  if (buf.length === size) return buf.toString('utf8');
  const end = buf.lastIndexOf(10);
  return buf.subarray(0, end < 0 ? buf.length : end + 1).toString('utf8');
}

/**
 * The text of the last `EDGE_BYTES`, starting after the first line end in it (the line before is
 * partial). Undefined when the head already covered the whole file.
 */
export async function tailText(file: FileHandle, size: number): Promise<string | undefined> {
  if (size <= EDGE_BYTES) return undefined;
  const start = Math.max(EDGE_BYTES, size - EDGE_BYTES);
  const buf = await readRange(file, start, size - start);
  const first = buf.indexOf(10);
  return first < 0 ? undefined : buf.subarray(first + 1).toString('utf8');
}
