import { open } from 'node:fs/promises';
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

export async function scanFiles(files: AsyncIterable<WalkedFile>, opts: ScanOptions): Promise<SearchEnd> {
  for await (const file of files) {
    if (Date.now() > opts.deadline) return 'timeout';
    const end = await scanFile(file, opts);
    if (end === 'timeout') return end;
    if (opts.collector.done) return 'limit';
  }
  return 'complete';
}

async function scanFile(file: WalkedFile, opts: ScanOptions): Promise<SearchEnd> {
  const { collector, context, regex } = opts;
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file.abs, 'r');
  } catch {
    // Unreadable files are skipped silently, as `rg --no-messages` does.
    return 'complete';
  }

  collector.beginFile(file.path);
  let binary = false;
  let timedOut = false;
  try {
    const buffer = Buffer.alloc(CHUNK_BYTES);
    let decoder: TextDecoder | undefined;
    let carry = '';
    let lineNo = 0;
    // Lines since the last one handed on, kept for before-context.
    const recent: { lineNo: number; text: string }[] = [];
    let afterLeft = 0;

    const onLine = (raw: string) => {
      const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      lineNo += 1;
      const m = regex.exec(text);
      if (m) {
        for (const r of recent) collector.addLine(r.lineNo, r.text, false);
        recent.length = 0;
        collector.addLine(lineNo, text, true, m.index);
        afterLeft = context;
      } else if (afterLeft > 0) {
        collector.addLine(lineNo, text, false);
        afterLeft -= 1;
      } else if (context > 0) {
        recent.push({ lineNo, text });
        if (recent.length > context) recent.shift();
      }
    };

    const feed = (text: string): boolean => {
      if (text.includes('\0')) return false;
      let start = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        onLine(carry + text.slice(start, nl));
        carry = '';
        start = nl + 1;
      }
      carry += text.slice(start);
      return true;
    };

    let position = 0;
    for (;;) {
      opts.signal.throwIfAborted();
      if (Date.now() > opts.deadline) {
        timedOut = true;
        break;
      }
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
      if (bytesRead === 0) break;
      const bytes = buffer.subarray(0, bytesRead);
      decoder ??= new TextDecoder(sniffEncoding(bytes));
      position += bytesRead;
      if (!feed(decoder.decode(bytes, { stream: true }))) {
        binary = true;
        break;
      }
    }
    if (!binary && !timedOut && decoder) {
      if (!feed(decoder.decode())) binary = true;
      else if (carry !== '') onLine(carry);
    }
  } catch (err) {
    if (opts.signal.aborted) throw err;
    // A read error midway: drop the file rather than report half of it.
    binary = true;
  } finally {
    await handle.close();
  }
  collector.endFile(binary || timedOut);
  return timedOut ? 'timeout' : 'complete';
}

/** ripgrep's BOM sniffing: UTF-16 with a BOM is transcoded, everything else is read as UTF-8. */
function sniffEncoding(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}
