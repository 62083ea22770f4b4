import { close, fstat, open, read } from 'node:fs';
import { TextDecoder } from 'node:util';
import { errorMessage } from '../path-guard.js';
import { ToolError } from '../types.js';
import { decodeUtf8, INVALID_REGEX_HINT, type SearchEnd, type SearchRequest } from './grep-output.js';
import type { WalkedFile } from './walk.js';

/**
 * The built-in grep engine, used when ripgrep is not installed. It feeds the collector what the
 * ripgrep engine does: UTF-8 text (UTF-16 when a BOM says so, BOM removed), lines ended by `\n`
 * with a `\r` before it dropped (rg --crlf), files holding a NUL byte skipped as binary, files over
 * maxFileBytes skipped and lines over maxLineBytes marked long (rg --max-filesize, --max-columns).
 * Patterns are JavaScript regexes: literal text, `.`, `*`, `+`, `?`, classes, groups,
 * alternation, anchors, `\p{..}`, `[[:alpha:]]` and `\b \d \w \s` behave as in ripgrep on ASCII
 * text. Differences: `\d \w \b` are ASCII-only here, inline flags other than a leading `(?i)` are
 * not understood, and look-around and backreferences work here while ripgrep rejects them.
 */

/** Files being read ahead of the one searched: each read is a few thread-pool round trips. */
const READ_AHEAD_FILES = 32;

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
  /** Unreadable: skipped silently, as `rg --no-messages` does. */
  { kind: 'skip' } | { kind: 'big'; size: number } | { kind: 'bytes'; bytes: Buffer };

/** Files are read into buffers of this size; most fit in one, and take a single read. */
const CHUNK_BYTES = 64 * 1024;

/** Searches `files` in order, reading ahead of the search. */
export async function scanFiles(files: AsyncIterable<WalkedFile[]>, opts: SearchRequest): Promise<SearchEnd> {
  const search = fileSearch(opts);
  const pool: Buffer[] = [];
  const queue: { file: WalkedFile; buffer: Buffer; read: Promise<FileRead> }[] = [];
  const next = async (): Promise<SearchEnd | undefined> => {
    const { file, buffer, read } = queue.shift()!;
    const got = await read;
    try {
      opts.signal.throwIfAborted();
      if (Date.now() > opts.deadline) return 'timeout';
      if (got.kind === 'big') opts.collector.skipFile(file.path, got.size);
      else if (got.kind === 'bytes') search(file.path, got.bytes);
    } finally {
      pool.push(buffer);
    }
    return opts.collector.done ? 'limit' : undefined;
  };
  for await (const batch of files) {
    for (const file of batch) {
      const buffer = pool.pop() ?? Buffer.allocUnsafe(CHUNK_BYTES);
      queue.push({ file, buffer, read: readFile(file.abs, buffer, opts.limits.maxFileBytes) });
      const end = queue.length >= READ_AHEAD_FILES ? await next() : undefined;
      if (end) return end;
    }
  }
  while (queue.length > 0) {
    const end = await next();
    if (end) return end;
  }
  return 'complete';
}

/**
 * A file's bytes, or why not. The first read goes into `buffer`; a shorter read is taken as the
 * end of the file, which saves the small files that make up most trees a stat call. Files over
 * `maxBytes` are not read further.
 */
function readFile(file: string, buffer: Buffer, maxBytes: number): Promise<FileRead> {
  return new Promise((resolve) => {
    open(file, 'r', (openError, fd) => {
      if (openError) return resolve({ kind: 'skip' });
      const done = (got: FileRead) => close(fd, () => resolve(got));
      read(fd, buffer, 0, buffer.length, 0, (firstError, first) => {
        if (firstError) return done({ kind: 'skip' });
        if (first < buffer.length) return done({ kind: 'bytes', bytes: buffer.subarray(0, first) });
        fstat(fd, (statError, info) => {
          if (statError) return done({ kind: 'skip' });
          if (info.size > maxBytes) return done({ kind: 'big', size: info.size });
          const bytes = Buffer.allocUnsafe(Math.max(info.size, first));
          buffer.copy(bytes);
          const more = (offset: number) => {
            if (offset === bytes.length) return done({ kind: 'bytes', bytes });
            read(fd, bytes, offset, bytes.length - offset, offset, (readError, n) => {
              if (readError) done({ kind: 'skip' });
              // Shorter than it was a moment ago.
              else if (n === 0) done({ kind: 'bytes', bytes: bytes.subarray(0, offset) });
              else more(offset + n);
            });
          };
          more(first);
        });
      });
    });
  });
}

/** Searches one file's bytes and tells the collector what matched, with context. */
function fileSearch(opts: SearchRequest): (path: string, bytes: Buffer) => void {
  const { collector, limits } = opts;
  const { context, maxLineBytes } = limits;
  const regex = compileScanRegex(opts.pattern, opts.ignoreCase);
  // A literal cannot match across lines, so one search of the whole text rules a file out.
  const literal = /^(?:[^\\.^$*+?()[\]{}|]|\\[^A-Za-z0-9])*$/.test(opts.pattern);
  // A UTF-16 unit takes three UTF-8 bytes at most, which spares measuring most lines.
  const isLong = (line: string, terminator: number) =>
    (line.length + 2) * 3 > maxLineBytes && Buffer.byteLength(line) + terminator > maxLineBytes;
  return (path, bytes) => {
    const text = decodeFile(bytes);
    if (text === undefined || (literal && !regex.test(text))) return;
    const recent: { lineNo: number; text: string; long: boolean }[] = [];
    let begun = false;
    let afterLeft = 0;
    let lineNo = 0;
    for (let start = 0; start < text.length; ) {
      const nl = text.indexOf('\n', start);
      const end = nl === -1 ? text.length : nl;
      const cr = nl !== -1 && end > start && text.charCodeAt(end - 1) === 13 ? 1 : 0;
      // The line's terminator counts towards its length, as with rg --max-columns.
      const terminator = cr + (nl === -1 ? 0 : 1);
      const line = text.slice(start, end - cr);
      lineNo += 1;
      start = end + 1;
      const m = regex.exec(line);
      if (m) {
        if (!begun) collector.beginFile(path);
        begun = true;
        for (const r of recent) collector.addLine(r.lineNo, r.text, false, -1, r.long);
        recent.length = 0;
        collector.addLine(lineNo, line, true, m.index, isLong(line, terminator));
        afterLeft = context;
      } else if (afterLeft > 0) {
        collector.addLine(lineNo, line, false, -1, isLong(line, terminator));
        afterLeft -= 1;
      } else if (context > 0) {
        recent.push({ lineNo, text: line, long: isLong(line, terminator) });
        if (recent.length > context) recent.shift();
      }
    }
    if (begun) collector.endFile(false);
  };
}

/** The file's text, or undefined when it is binary (holds a NUL). UTF-16 is recognised by its BOM, as ripgrep does. */
function decodeFile(bytes: Buffer): string | undefined {
  const encoding =
    bytes[0] === 0xff && bytes[1] === 0xfe
      ? 'utf-16le'
      : bytes[0] === 0xfe && bytes[1] === 0xff
        ? 'utf-16be'
        : 'utf-8';
  if (encoding === 'utf-8') {
    // In UTF-8 a NUL character comes only from a zero byte, which is cheaper to look for.
    if (bytes.includes(0)) return undefined;
    return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
      ? decodeUtf8(bytes.subarray(3))
      : decodeUtf8(bytes);
  }
  const text = new TextDecoder(encoding).decode(bytes);
  return text.includes('\0') ? undefined : text;
}
