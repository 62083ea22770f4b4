import { isAscii } from 'node:buffer';
import { close, open, read } from 'node:fs';
import { TextDecoder } from 'node:util';
import { errorMessage } from '../path-guard.js';
import { ToolError } from '../types.js';
import { LineFeeder } from './grep-lines.js';
import { type GrepCollector, INVALID_REGEX_HINT } from './grep-output.js';
import type { WalkedFile } from './walk.js';

/**
 * The pure-TypeScript grep engine, used when ripgrep is not installed. It reproduces what the
 * ripgrep engine feeds the collector: UTF-8 text (UTF-16 when a BOM says so, BOM removed), lines
 * ended by `\n` with a trailing `\r` dropped (rg --crlf), files holding a NUL byte skipped as
 * binary. Patterns are JavaScript regexes: literal text, `.`, `*`, `+`, `?`, classes, groups,
 * alternation, anchors, `\p{..}`, `[[:alpha:]]` and `\b \d \w \s` behave as in ripgrep on ASCII
 * text. Differences: `\d \w \b` are ASCII-only here, inline flags other than a leading `(?i)` are
 * not understood, and look-around and backreferences work here while ripgrep rejects them.
 */

const CHUNK_BYTES = 64 * 1024;

/** Files being opened and read ahead of the one searched: enough to keep the thread pool busy. */
const READ_AHEAD_FILES = 32;

export interface ScanOptions {
  regex: RegExp;
  context: number;
  collector: GrepCollector;
  signal: AbortSignal;
  /** Epoch milliseconds after which the scan stops with what it has. */
  deadline: number;
}

export type SearchEnd = 'complete' | 'limit' | 'timeout';

/** ASCII bracket classes as Rust's regex defines them, spelled out for use inside `[...]`. */
const POSIX_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/** Compiles a ripgrep-style pattern as a JavaScript regex, or throws a ToolError saying why not. */
export function compileScanRegex(pattern: string, ignoreCase: boolean): RegExp {
  let source = pattern;
  let flags = ignoreCase ? 'i' : '';
  // Rust spellings with a direct JavaScript equivalent.
  if (source.startsWith('(?i)')) {
    source = source.slice(4);
    flags = 'i';
  }
  source = source
    .replaceAll('(?P<', '(?<')
    .replace(/\[\[:\^([a-z]+):\]\]/g, (whole, name: string) => {
      const ascii = POSIX_CLASSES[name];
      return ascii === undefined ? whole : `[^${ascii}]`;
    })
    .replace(/\[:([a-z]+):\]/g, (whole, name: string) => POSIX_CLASSES[name] ?? whole);
  try {
    // Unicode mode first: `.` then matches a whole character, as in Rust.
    return new RegExp(source, `${flags}u`);
  } catch (unicodeError) {
    try {
      // Legacy mode accepts escapes such as `\-` and a bare `{` that Unicode mode rejects.
      return new RegExp(source, flags);
    } catch {
      throw new ToolError(
        `Invalid regex ${JSON.stringify(pattern)}: ${errorMessage(unicodeError)}.\n${INVALID_REGEX_HINT}`,
      );
    }
  }
}

type FileRead =
  /** Unreadable, or the read failed: skipped silently, as `rg --no-messages` does. */
  | { kind: 'skip' }
  /** The whole file, shorter than a chunk, at the start of a pooled buffer. */
  | { kind: 'whole'; buffer: Buffer; length: number }
  /** The first chunk, which filled the buffer; the file is still open for the rest. */
  | { kind: 'open'; buffer: Buffer; fd: number };

interface Queued {
  file: WalkedFile;
  read: Promise<FileRead>;
}

/**
 * Searches `files` in order. Reads run ahead of the search, READ_AHEAD_FILES at a time: each
 * open, read and close is a thread-pool round trip, and waiting for them one file at a time left
 * the process idle most of the time. Files are searched in walk order whatever order their reads
 * finish in, so the output does not change; memory stays at READ_AHEAD_FILES chunks.
 */
export async function scanFiles(files: AsyncIterable<WalkedFile[]>, opts: ScanOptions): Promise<SearchEnd> {
  const feeder = new LineFeeder(opts.regex, opts.context, opts.collector);
  const utf8 = new TextDecoder('utf-8');
  const pool: Buffer[] = [];
  const ring: (Queued | undefined)[] = new Array(READ_AHEAD_FILES);
  let head = 0;
  let tail = 0;
  const walk = files[Symbol.asyncIterator]();
  let batch: WalkedFile[] = [];
  let next = 0;
  let walked = false;
  try {
    for (;;) {
      while (tail - head < READ_AHEAD_FILES && !walked) {
        if (next < batch.length) {
          const file = batch[next++]!;
          const buffer = pool.pop() ?? Buffer.allocUnsafe(CHUNK_BYTES);
          ring[tail++ % READ_AHEAD_FILES] = { file, read: readStart(file.abs, buffer) };
        } else {
          const step = await walk.next();
          if (step.done) walked = true;
          else {
            batch = step.value;
            next = 0;
          }
        }
      }
      if (head === tail) return 'complete';
      const slot = head++ % READ_AHEAD_FILES;
      const { file, read } = ring[slot]!;
      ring[slot] = undefined;
      const got = await read;
      if (got.kind === 'skip') continue;
      try {
        if (Date.now() > opts.deadline) return 'timeout';
        opts.signal.throwIfAborted();
        if (got.kind === 'whole') {
          searchWhole(file.path, got.buffer.subarray(0, got.length), feeder, utf8);
        } else if ((await streamFile(file.path, got, feeder, opts)) === 'timeout') {
          return 'timeout';
        }
      } finally {
        if (got.kind === 'open') close(got.fd, ignore);
        pool.push(got.buffer);
      }
      if (opts.collector.done) return 'limit';
    }
  } finally {
    // Reads already started finish in the background; any file one left open is closed then.
    for (let i = head; i < tail; i++) {
      void ring[i % READ_AHEAD_FILES]!.read.then((got) => {
        if (got.kind === 'open') close(got.fd, ignore);
      });
    }
    await walk.return?.(undefined);
  }
}

function ignore(): void {}

/**
 * Opens a file and reads its first chunk. A short read is taken as the end of a regular file,
 * which saves the round trip of a second read on the small files that make up most trees.
 */
function readStart(file: string, buffer: Buffer): Promise<FileRead> {
  return new Promise((resolve) => {
    open(file, 'r', (openError, fd) => {
      if (openError) return resolve({ kind: 'skip' });
      read(fd, buffer, 0, CHUNK_BYTES, 0, (readError, length) => {
        if (readError) {
          close(fd, ignore);
          resolve({ kind: 'skip' });
        } else if (length === CHUNK_BYTES) {
          resolve({ kind: 'open', buffer, fd });
        } else {
          close(fd, () => resolve({ kind: 'whole', buffer, length }));
        }
      });
    });
  });
}

function readChunk(fd: number, buffer: Buffer, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    read(fd, buffer, 0, buffer.length, position, (err, length) => (err ? reject(err) : resolve(length)));
  });
}

/** A file that fitted in one chunk: a binary file, or one without a candidate line, costs one search at most. */
function searchWhole(path: string, bytes: Buffer, feeder: LineFeeder, utf8: TextDecoder): void {
  const encoding = sniffEncoding(bytes);
  let text: string;
  if (encoding === 'utf-8') {
    // In UTF-8 a NUL character comes only from a zero byte, which is cheaper to look for.
    if (bytes.includes(0)) return;
    text = isAscii(bytes) ? bytes.toString('latin1') : utf8.decode(bytes);
  } else {
    text = new TextDecoder(encoding).decode(bytes);
    if (text.includes('\0')) return;
  }
  if (!feeder.mayMatch(text)) return;
  feeder.begin(path);
  feeder.lines(text);
  feeder.end(false);
}

/** A file longer than one chunk, decoded and searched a chunk at a time. */
async function streamFile(
  path: string,
  got: { buffer: Buffer; fd: number },
  feeder: LineFeeder,
  opts: ScanOptions,
): Promise<SearchEnd> {
  const { buffer, fd } = got;
  const encoding = sniffEncoding(buffer);
  const decoder = new TextDecoder(encoding);
  const utf8 = encoding === 'utf-8';
  feeder.begin(path);
  let carry = '';
  let length = buffer.length;
  let position = 0;
  let binary = false;
  try {
    while (length > 0) {
      const bytes = buffer.subarray(0, length);
      position += length;
      if (utf8 && bytes.includes(0)) {
        binary = true;
        break;
      }
      const text = carry + decoder.decode(bytes, { stream: true });
      if (!utf8 && text.includes('\0')) {
        binary = true;
        break;
      }
      const cut = text.lastIndexOf('\n') + 1;
      if (cut > 0) feeder.lines(text.slice(0, cut));
      carry = text.slice(cut);
      opts.signal.throwIfAborted();
      if (Date.now() > opts.deadline) {
        feeder.end(true);
        return 'timeout';
      }
      length = await readChunk(fd, buffer, position);
    }
    if (!binary) {
      const rest = decoder.decode();
      if (rest.includes('\0')) binary = true;
      else feeder.lines(carry + rest);
    }
  } catch (err) {
    if (opts.signal.aborted) throw err;
    // A read error midway: drop the file rather than report half of it.
    binary = true;
  }
  feeder.end(binary);
  return 'complete';
}

/** ripgrep's BOM sniffing: UTF-16 with a BOM is transcoded, everything else is read as UTF-8. */
function sniffEncoding(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}
