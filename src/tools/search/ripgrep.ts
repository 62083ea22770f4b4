import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { TextDecoder } from 'node:util';
import { ToolError } from '../types.js';
import type { SearchEnd } from './grep-fallback.js';
import { type GrepCollector, INVALID_REGEX_HINT } from './grep-output.js';
import type { WalkedFile } from './walk.js';

/**
 * The ripgrep engine. ripgrep does not walk the tree here: it is handed the files our walker
 * chose, so both engines search exactly the same files in the same order and the ignore rules
 * live in one place. Explicit paths bypass rg's own ignore and hidden-file filters, so none of
 * --no-ignore, --hidden or --no-require-git are needed. `--json` gives each line with its number,
 * its first match's byte offset and whether the file was binary, which the collector prints
 * itself: rg's own printer, encoding quirks and separators never reach the model.
 */

/** Arguments per rg process; well under Linux's 128 KB-per-argument and 2 MB total limits and Windows' 32 K. */
const MAX_BATCH_CHARS = process.platform === 'win32' ? 24_000 : 100_000;
const STDERR_KEEP = 4096;

/** The rg executable on `searchPath`, or undefined. */
export function findRipgrep(searchPath: string): string | undefined {
  const names = process.platform === 'win32' ? ['rg.exe', 'rg'] : ['rg'];
  for (const dir of searchPath.split(path.delimiter)) {
    if (dir === '') continue;
    for (const name of names) {
      const candidate = path.join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        if (statSync(candidate).isFile()) return candidate;
      } catch {
        // Not here; keep looking.
      }
    }
  }
  return undefined;
}

export interface RipgrepOptions {
  rgPath: string;
  /** The workspace: rg runs there and gets workspace-relative paths, which it echoes back. */
  cwd: string;
  pattern: string;
  ignoreCase: boolean;
  context: number;
  collector: GrepCollector;
  signal: AbortSignal;
  deadline: number;
}

/** Thrown when rg cannot be started or dies without output, so the caller can fall back to the scan engine. */
export class RipgrepUnavailable extends Error {
  override name = 'RipgrepUnavailable';
}

export async function searchWithRipgrep(
  files: AsyncIterable<WalkedFile>,
  opts: RipgrepOptions,
): Promise<SearchEnd> {
  const baseArgs = ['--json', '--no-config', '--no-messages', '--crlf', '--threads=1'];
  if (opts.ignoreCase) baseArgs.push('--ignore-case');
  if (opts.context > 0) baseArgs.push(`--context=${opts.context}`);
  baseArgs.push('--regexp', opts.pattern, '--');

  let batch: string[] = [];
  let batchChars = 0;
  let searched = 0;
  for await (const file of files) {
    batch.push(file.path);
    batchChars += file.path.length + 1;
    if (batchChars < MAX_BATCH_CHARS) continue;
    const end = await runBatch([...baseArgs, ...batch], opts);
    searched += batch.length;
    if (end !== 'complete') return end;
    batch = [];
    batchChars = 0;
  }
  if (batch.length > 0 || searched === 0) {
    // With no files at all, rg still runs once on empty stdin so an invalid pattern is reported.
    return runBatch(batch.length > 0 ? [...baseArgs, ...batch] : [...baseArgs, '-'], opts);
  }
  return 'complete';
}

interface JsonData {
  path?: { text?: string; bytes?: string };
  lines?: { text?: string; bytes?: string };
  line_number?: number;
  submatches?: { start: number }[];
  binary_offset?: number | null;
}

function runBatch(args: string[], opts: RipgrepOptions): Promise<SearchEnd> {
  if (opts.signal.aborted) return Promise.reject(opts.signal.reason);
  if (Date.now() > opts.deadline) return Promise.resolve('timeout');
  const { collector } = opts;
  return new Promise<SearchEnd>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(opts.rgPath, args, {
        cwd: opts.cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (err) {
      reject(new RipgrepUnavailable(String(err)));
      return;
    }

    let stopped: SearchEnd | 'aborted' | undefined;
    let sawJson = false;
    let pending = '';
    let stderr = '';
    const stop = (why: SearchEnd | 'aborted') => {
      if (stopped) return;
      stopped = why;
      child.kill('SIGKILL');
    };
    const onAbort = () => stop('aborted');
    opts.signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => stop('timeout'), Math.max(0, opts.deadline - Date.now()));

    const handle = (line: string) => {
      if (line === '' || stopped) return;
      let message: { type: string; data: JsonData };
      try {
        message = JSON.parse(line);
      } catch {
        return;
      }
      sawJson = true;
      const data = message.data;
      switch (message.type) {
        case 'begin':
          collector.beginFile(jsonText(data.path));
          break;
        case 'match':
        case 'context': {
          const isMatch = message.type === 'match';
          const line = decodeLine(data.lines, isMatch ? (data.submatches?.[0]?.start ?? 0) : -1);
          collector.addLine(data.line_number ?? 0, line.text, isMatch, line.at);
          break;
        }
        case 'end':
          collector.endFile(data.binary_offset !== null && data.binary_offset !== undefined);
          if (collector.done) stop('limit');
          break;
      }
    };

    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      pending += chunk;
      let start = 0;
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n', start)) {
        handle(pending.slice(start, nl));
        start = nl + 1;
      }
      pending = pending.slice(start);
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      if (stderr.length < STDERR_KEEP) stderr += chunk;
    });

    const finish = () => {
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', onAbort);
    };
    child.on('error', (err) => {
      finish();
      reject(new RipgrepUnavailable(String(err)));
    });
    child.on('close', (code) => {
      finish();
      if (!stopped) handle(pending);
      if (stopped === 'aborted') return reject(opts.signal.reason);
      if (stopped) return resolve(stopped);
      // rg prints no JSON at all when it rejects the pattern; exit 2 after JSON only means some
      // file could not be read, which the scan engine skips silently too.
      if (!sawJson && code !== 0 && code !== 1) {
        const detail = stderr.trim() || `rg exited with code ${code}`;
        if (code === 2) {
          return reject(
            new ToolError(
              `Invalid regex ${JSON.stringify(opts.pattern)} (ripgrep):\n${detail}\n${INVALID_REGEX_HINT}`,
            ),
          );
        }
        // Crashed, or not really ripgrep: the caller can still search without it.
        return reject(new RipgrepUnavailable(`ripgrep failed: ${detail}`));
      }
      resolve('complete');
    });
  });
}

function jsonText(field: { text?: string; bytes?: string } | undefined): string {
  return field?.text ?? (field?.bytes !== undefined ? decodeUtf8(Buffer.from(field.bytes, 'base64')) : '');
}

/**
 * A line without its terminator, and where its first match starts as a string index (rg gives a
 * byte offset). Lines that are not valid UTF-8 come base64-encoded; they are decoded with
 * replacement characters, as the scan engine's decoder does.
 */
function decodeLine(
  field: { text?: string; bytes?: string } | undefined,
  byteOffset: number,
): { text: string; at: number } {
  let raw: string;
  let at: number;
  if (field?.text !== undefined) {
    raw = field.text;
    at =
      byteOffset <= 0 || /^[\x00-\x7f]*$/.test(raw) ? byteOffset : prefixLength(Buffer.from(raw), byteOffset);
  } else {
    const bytes = Buffer.from(field?.bytes ?? '', 'base64');
    raw = decodeUtf8(bytes);
    at = byteOffset <= 0 ? byteOffset : prefixLength(bytes, byteOffset);
  }
  return { text: stripTerminator(raw), at };
}

function prefixLength(bytes: Buffer, byteOffset: number): number {
  return decodeUtf8(bytes.subarray(0, byteOffset)).length;
}

function decodeUtf8(bytes: Buffer): string {
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
}

function stripTerminator(line: string): string {
  if (line.endsWith('\r\n')) return line.slice(0, -2);
  if (line.endsWith('\n') || line.endsWith('\r')) return line.slice(0, -1);
  return line;
}
