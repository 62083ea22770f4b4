import { isAscii } from 'node:buffer';
import { close, open, read } from 'node:fs';
import { TextDecoder } from 'node:util';
import { errorMessage } from '../path-guard.js';
import { ToolError } from '../types.js';
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
  const feeder = new LineFeeder(opts);
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
          feeder.searchWhole(file.path, got.buffer.subarray(0, got.length));
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
      // In UTF-8 a NUL character comes only from a zero byte, which is cheaper to look for.
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

/**
 * Hands one file's lines to the collector as ripgrep reports them: numbered, context included.
 * A line is split off and tested alone only where a search of the whole text finds a candidate,
 * so most of a file that does not match is never cut into lines.
 */
class LineFeeder {
  private readonly regex: RegExp;
  /**
   * The pattern run over many lines at once, or undefined when that could miss a line's match.
   * A match within one line is still one in the whole text (with `m`, `^` and `$` hold at line
   * breaks and `\r`; `\b` sees a line break as a non-word character), except that a negative
   * look-around that passed at a line's edge may fail on the neighbouring text.
   */
  private readonly candidates: RegExp | undefined;
  private readonly context: number;
  private readonly collector: GrepCollector;
  private readonly utf8 = new TextDecoder('utf-8');

  private path = '';
  private begun = false;
  private lineNo = 0;
  private afterLeft = 0;
  /** Lines since the last one handed on, kept for before-context. */
  private recent: { lineNo: number; text: string }[] = [];

  constructor(opts: ScanOptions) {
    this.regex = opts.regex;
    this.context = opts.context;
    this.collector = opts.collector;
    const source = opts.regex.source;
    this.candidates =
      source.includes('(?!') || source.includes('(?<!')
        ? undefined
        : new RegExp(source, `${opts.regex.flags.replace(/[gmy]/g, '')}gm`);
  }

  /** A file that fitted in one chunk: binary files and files without a candidate cost one search at most. */
  searchWhole(path: string, bytes: Buffer): void {
    const encoding = sniffEncoding(bytes);
    let text: string;
    if (encoding === 'utf-8') {
      if (bytes.includes(0)) return;
      text = isAscii(bytes) ? bytes.toString('latin1') : this.utf8.decode(bytes);
    } else {
      text = new TextDecoder(encoding).decode(bytes);
      if (text.includes('\0')) return;
    }
    if (this.candidates) {
      this.candidates.lastIndex = 0;
      if (!this.candidates.test(text)) return;
    }
    this.begin(path);
    this.lines(text);
    this.end(false);
  }

  begin(path: string): void {
    this.path = path;
    this.begun = false;
    this.lineNo = 0;
    this.afterLeft = 0;
    this.recent.length = 0;
  }

  /** Commits the file to the collector, or drops it; files without a match never reach it. */
  end(binary: boolean): void {
    if (this.begun) this.collector.endFile(binary);
    this.begun = false;
  }

  /** `text` is whole lines, each ended by `\n` except the file's last one when it has none. */
  lines(text: string): void {
    const end = text.length;
    let start = 0;
    while (start < end) {
      if (this.candidates) {
        this.candidates.lastIndex = start;
        const hit = this.candidates.exec(text);
        // A match never starts before the line it belongs to, so the lines before it cannot match.
        const lineStart =
          hit === null ? end : hit.index === 0 ? 0 : text.lastIndexOf('\n', hit.index - 1) + 1;
        this.pass(text, start, Math.min(lineStart, end));
        if (lineStart >= end) return;
        start = lineStart;
      }
      const lineEnd = endOfLine(text, start, end);
      this.line(withoutCr(text.slice(start, lineEnd)));
      start = lineEnd + 1;
    }
  }

  private line(text: string): void {
    this.lineNo += 1;
    const m = this.regex.exec(text);
    if (!m) {
      this.passLine(text);
      return;
    }
    if (!this.begun) {
      this.collector.beginFile(this.path);
      this.begun = true;
    }
    for (const r of this.recent) this.collector.addLine(r.lineNo, r.text, false);
    this.recent.length = 0;
    this.collector.addLine(this.lineNo, text, true, m.index);
    this.afterLeft = this.context;
  }

  /** A line known not to match, already counted. */
  private passLine(text: string): void {
    if (this.afterLeft > 0) {
      this.collector.addLine(this.lineNo, text, false);
      this.afterLeft -= 1;
    } else if (this.context > 0) {
      this.recent.push({ lineNo: this.lineNo, text });
      if (this.recent.length > this.context) this.recent.shift();
    }
  }

  /** Whole lines in text[from, to) known not to match: only those that can be context are cut out. */
  private pass(text: string, from: number, to: number): void {
    let start = from;
    while (start < to && this.afterLeft > 0) {
      const lineEnd = endOfLine(text, start, to);
      this.lineNo += 1;
      this.passLine(withoutCr(text.slice(start, lineEnd)));
      start = lineEnd + 1;
    }
    const tail = this.context > 0 ? startOfLastLines(text, start, to, this.context) : to;
    for (; start < tail; start = endOfLine(text, start, tail) + 1) this.lineNo += 1;
    for (; start < to; start = endOfLine(text, start, to) + 1) {
      this.lineNo += 1;
      this.passLine(withoutCr(text.slice(start, endOfLine(text, start, to))));
    }
  }
}

/** Where the line starting at `start` ends: its `\n`, or `to` for a last line without one. */
function endOfLine(text: string, start: number, to: number): number {
  const nl = text.indexOf('\n', start);
  return nl === -1 || nl > to ? to : nl;
}

/** Where the last `count` whole lines of text[from, to) begin (`from` when there are fewer). */
function startOfLastLines(text: string, from: number, to: number, count: number): number {
  let start = to;
  for (let i = 0; i < count && start > from; i++) {
    // The line before `start` ends at start - 1 (its `\n`, or the last character of a last line
    // without one), so it begins after the `\n` found from start - 2 back.
    start = start - 1 > from ? Math.max(from, text.lastIndexOf('\n', start - 2) + 1) : from;
  }
  return start;
}

function withoutCr(line: string): string {
  return line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
}

/** ripgrep's BOM sniffing: UTF-16 with a BOM is transcoded, everything else is read as UTF-8. */
function sniffEncoding(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}
