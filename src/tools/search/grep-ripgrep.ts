import { isAscii } from 'node:buffer';
import { ToolError } from '../types.js';
import {
  decodeUtf8,
  type GrepCollector,
  INVALID_REGEX_HINT,
  type SearchEnd,
  type SearchRequest,
} from './grep-output.js';
import { fromRipgrepPath, RipgrepUnavailable, rootArg, runRipgrep, scopeArgs } from './ripgrep.js';
import type { SearchScope } from './scope.js';

/**
 * The ripgrep grep engine: one rg walks and searches the tree on all its threads, printing each
 * file's lines together (in no particular file order; the collector sorts). rg's own printer
 * gives `path NUL line:column:text` and, with --max-columns, only the start of a long line, so a
 * 50 MB one-line file never crosses the pipe whole; --debug is how rg names the files it skipped
 * for --max-filesize.
 */

export interface RipgrepSearch extends SearchRequest {
  rgPath: string;
  /** The workspace, where rg runs. */
  workspace: string;
  /**
   * A tree, with the user's glob as an early file-name test for rg (see globFileName) and as an
   * exact filter of paths relative to the scope's root; or one file, workspace-relative.
   */
  target: { scope: SearchScope; fileName?: string; filter?: (rel: string) => boolean } | { file: string };
}

export async function searchWithRipgrep(search: RipgrepSearch): Promise<SearchEnd> {
  const { target, limits, collector } = search;
  const args = 'scope' in target ? [...scopeArgs(target.scope, target.fileName), '--debug'] : ['--no-config'];
  args.push(
    '--color=never',
    '--no-heading',
    '--with-filename',
    '--null',
    '--column',
    '--crlf',
    // With mmap, rg looks for a NUL byte only near the start of a file.
    '--no-mmap',
    '--no-messages',
    `--max-filesize=${limits.maxFileBytes}`,
    `--max-columns=${limits.maxLineBytes}`,
    '--max-columns-preview',
  );
  if (search.ignoreCase) args.push('--ignore-case');
  if (limits.context > 0) args.push(`--context=${limits.context}`);
  args.push('--regexp', search.pattern, '--', 'scope' in target ? rootArg(target.scope) : target.file);

  let keep: ((path: string) => boolean) | undefined;
  if ('scope' in target && target.filter) {
    const { filter } = target;
    const rootPrefix = target.scope.rootPath === '' ? '' : `${target.scope.rootPath}/`;
    keep = (path) => filter(path.slice(rootPrefix.length));
  }
  const parser = new OutputParser(collector, limits.maxLineBytes, keep);
  const run = runRipgrep({
    rgPath: search.rgPath,
    args,
    cwd: search.workspace,
    signal: search.signal,
    deadline: search.deadline,
    onStdout: (chunk) => {
      parser.feed(chunk);
      if (collector.done) run.stop();
    },
    onDebug: (line) => {
      const skipped = /: ignoring (.+): (\d+) bytes$/.exec(line);
      if (skipped) collector.skipFile(fromRipgrepPath(skipped[1]!), Number(skipped[2]));
    },
  });
  const exit = await run.exit;
  if (exit.stopped === 'timeout') return 'timeout';
  if (exit.stopped === 'stop') return 'limit';
  if (exit.code === 0 || exit.code === 1 || (exit.code === 2 && parser.sawOutput)) {
    // Exit 2 after output only means some file could not be read, which the scan skips silently too.
    parser.finish();
    return 'complete';
  }
  if (exit.code === 2 && /regex/i.test(exit.stderr)) {
    throw new ToolError(
      `Invalid regex ${JSON.stringify(search.pattern)} (ripgrep):\n${exit.stderr}\n${INVALID_REGEX_HINT}`,
    );
  }
  if (exit.code === 2 && exit.stderr === '') return 'complete';
  // Crashed, too old for these flags, or not really ripgrep: the built-in engine can still search.
  throw new RipgrepUnavailable(`ripgrep failed: ${exit.stderr || `exit code ${exit.code}`}`);
}

const COLON = 0x3a;
const CR = 0x0d;
const MORE_MATCHES = / \[\.\.\. \d+ more match(?:es)?\]$/;
const OMITTED_END = ' [... omitted end of long line]';

/** Reads rg's output a line at a time and feeds the collector a file at a time. */
class OutputParser {
  sawOutput = false;
  private pending: Buffer[] = [];
  /** The file whose lines are coming, unless filtered out. */
  private current: string | undefined;
  private skipping = false;
  private binary = false;
  /** The first part of a path with a line break in it. */
  private carry = '';

  constructor(
    private readonly collector: GrepCollector,
    private readonly maxLineBytes: number,
    private readonly keep?: (path: string) => boolean,
  ) {}

  feed(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (this.pending.length === 0) this.line(piece);
      else {
        this.pending.push(piece);
        this.line(Buffer.concat(this.pending));
        this.pending = [];
      }
    }
    if (start < chunk.length) this.pending.push(chunk.subarray(start));
  }

  /** Commits the last file; only once rg has ended, since a binary notice may still follow its lines. */
  finish(): void {
    this.endFile();
  }

  private line(buf: Buffer): void {
    if (this.collector.done) return;
    this.sawOutput = true;
    const end = buf[buf.length - 1] === CR ? buf.length - 1 : buf.length;
    const nul = buf.indexOf(0);
    if (nul === -1 || nul >= end) {
      const text = decodeUtf8(buf.subarray(0, end));
      if (text === '--') return;
      // "path: WARNING: stopped searching binary file after match (found "\0" byte around offset N)"
      if (/ byte around offset \d+\)$/.test(text)) this.binary = true;
      else this.carry += `${text}\n`;
      return;
    }
    const path = fromRipgrepPath(this.carry + decodeUtf8(buf.subarray(0, nul)));
    this.carry = '';
    if (path !== this.current) {
      this.endFile();
      this.current = path;
      this.binary = false;
      this.skipping = this.keep !== undefined && !this.keep(path);
      if (!this.skipping) this.collector.beginFile(path);
    }
    if (this.skipping) return;

    // `line:column:text` for a match, `line-text` for context.
    let i = nul + 1;
    const lineNo = readNumber(buf, i);
    i += String(lineNo).length;
    const isMatch = buf[i] === COLON;
    i += 1;
    const column = isMatch ? readNumber(buf, i) : 0;
    if (isMatch) i += String(column).length + 1;
    const bytes = buf.subarray(i, end);
    let text = decodeUtf8(bytes);
    let shownBytes = bytes.length;
    const suffix = isMatch
      ? MORE_MATCHES.exec(text)?.[0]
      : text.endsWith(OMITTED_END)
        ? OMITTED_END
        : undefined;
    // A line that ends like rg's note but is short is just text that says so.
    const long = suffix !== undefined && bytes.length - suffix.length >= this.maxLineBytes - 1;
    if (long) {
      text = text.slice(0, -suffix.length);
      shownBytes -= suffix.length;
    }
    let matchAt = -1;
    if (isMatch) {
      const offset = column - 1;
      matchAt =
        offset > shownBytes
          ? Number.MAX_SAFE_INTEGER
          : isAscii(bytes)
            ? offset
            : decodeUtf8(bytes.subarray(0, offset)).length;
    }
    this.collector.addLine(lineNo, text, isMatch, matchAt, long);
  }

  private endFile(): void {
    if (this.current !== undefined && !this.skipping) this.collector.endFile(this.binary);
    this.current = undefined;
  }
}

function readNumber(buf: Buffer, from: number): number {
  let n = 0;
  for (let i = from; i < buf.length && buf[i]! >= 0x30 && buf[i]! <= 0x39; i++) n = n * 10 + buf[i]! - 0x30;
  return n;
}
