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
  /** Characters of paths per rg process; MAX_BATCH_CHARS unless a test wants many batches. */
  batchChars?: number;
  /** Output a waiting batch holds; HELD_OUTPUT_CHARS unless a test wants rg made to wait. */
  holdChars?: number;
}

/** Thrown when rg cannot be started or dies without output, so the caller can fall back to the scan engine. */
export class RipgrepUnavailable extends Error {
  override name = 'RipgrepUnavailable';
}

/** rg processes at once: while one reports, the next searches its batch and holds its output back. */
const CONCURRENT_BATCHES = 2;

/** Output a batch may hold while waiting its turn; beyond it, its rg waits on a full pipe. */
const HELD_OUTPUT_CHARS = 1 << 20;

interface Batch {
  /** Settles once rg has ended and everything it printed has reached the collector. */
  end: Promise<SearchEnd>;
  /** Kills rg if it still runs; nothing more reaches the collector. */
  cancel(): void;
}

/**
 * Runs rg over the walked files in batches (a single rg runs one thread, and its own threads
 * would print files out of order). Two batches run at once, the walk going on meanwhile, but the
 * collector hears a batch only after the one before has ended, so it sees the files in walk order.
 */
export async function searchWithRipgrep(
  files: AsyncIterable<WalkedFile[]>,
  opts: RipgrepOptions,
): Promise<SearchEnd> {
  // --no-mmap: rg maps a batch of a few files into memory, and then looks for a NUL byte only near
  // the start, so a file found binary in a big batch (and by the scan engine) was not in a small one.
  const baseArgs = ['--json', '--no-config', '--no-messages', '--crlf', '--threads=1', '--no-mmap'];
  if (opts.ignoreCase) baseArgs.push('--ignore-case');
  if (opts.context > 0) baseArgs.push(`--context=${opts.context}`);
  baseArgs.push('--regexp', opts.pattern, '--');

  const maxBatchChars = opts.batchChars ?? MAX_BATCH_CHARS;
  const running: Batch[] = [];
  const oldestEnd = async (): Promise<SearchEnd> => {
    const end = await running[0]!.end;
    running.shift();
    return end;
  };
  const launch = async (paths: string[]): Promise<SearchEnd> => {
    if (running.length >= CONCURRENT_BATCHES) {
      const end = await oldestEnd();
      if (end !== 'complete') return end;
    }
    const previous = running[running.length - 1];
    const turn = previous?.end.then(
      (end) => end === 'complete',
      () => false,
    );
    running.push(runBatch([...baseArgs, ...paths], opts, turn));
    return 'complete';
  };

  try {
    let batch: string[] = [];
    let batchChars = 0;
    let launched = false;
    for await (const walked of files) {
      for (const file of walked) {
        batch.push(file.path);
        batchChars += file.path.length + 1;
        if (batchChars < maxBatchChars) continue;
        const end = await launch(batch);
        if (end !== 'complete') return end;
        launched = true;
        batch = [];
        batchChars = 0;
      }
    }
    if (batch.length > 0 || !launched) {
      // With no files at all, rg still runs once on empty stdin so an invalid pattern is reported.
      const end = await launch(batch.length > 0 ? batch : ['-']);
      if (end !== 'complete') return end;
    }
    while (running.length > 0) {
      const end = await oldestEnd();
      if (end !== 'complete') return end;
    }
    return 'complete';
  } finally {
    for (const batch of running) batch.cancel();
  }
}

interface JsonData {
  path?: { text?: string; bytes?: string };
  lines?: { text?: string; bytes?: string };
  line_number?: number;
  submatches?: { start: number }[];
  binary_offset?: number | null;
}

/**
 * Starts rg on one batch. With `turn`, its output is held until `turn` says the batch before
 * completed (true), or rg is killed and its output dropped (false).
 */
function runBatch(args: string[], opts: RipgrepOptions, turn?: Promise<boolean>): Batch {
  if (opts.signal.aborted) return settledBatch(Promise.reject(opts.signal.reason));
  if (Date.now() > opts.deadline) return settledBatch(Promise.resolve('timeout'));
  const { collector } = opts;
  let cancel = () => {};
  const end = new Promise<SearchEnd>((resolve, reject) => {
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

    let stopped: SearchEnd | 'aborted' | 'cancelled' | undefined;
    let sawJson = false;
    let pending = '';
    let stderr = '';
    let live = turn === undefined;
    const held: string[] = [];
    let heldChars = 0;
    let exitCode: number | null | undefined;
    let settled = false;
    const stop = (why: SearchEnd | 'aborted' | 'cancelled') => {
      if (stopped) return;
      stopped = why;
      child.kill('SIGKILL');
    };
    cancel = () => stop('cancelled');
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
    const consume = (chunk: string) => {
      pending += chunk;
      let start = 0;
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n', start)) {
        handle(pending.slice(start, nl));
        start = nl + 1;
      }
      pending = pending.slice(start);
    };

    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', onAbort);
      if (!stopped) handle(pending);
      if (stopped === 'aborted') return reject(opts.signal.reason);
      if (stopped === 'cancelled') return resolve('complete');
      if (stopped) return resolve(stopped);
      // rg prints no JSON at all when it rejects the pattern; exit 2 after JSON only means some
      // file could not be read, which the scan engine skips silently too.
      if (!sawJson && exitCode !== 0 && exitCode !== 1) {
        const detail = stderr.trim() || `rg exited with code ${exitCode}`;
        if (exitCode === 2) {
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
    };

    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      if (live) return consume(chunk);
      held.push(chunk);
      heldChars += chunk.length;
      if (heldChars > (opts.holdChars ?? HELD_OUTPUT_CHARS)) child.stdout?.pause();
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      if (stderr.length < STDERR_KEEP) stderr += chunk;
    });
    void turn?.then((go) => {
      if (!go) stop('cancelled');
      live = true;
      for (const chunk of held.splice(0)) consume(chunk);
      child.stdout?.resume();
      if (exitCode !== undefined) settle();
    });

    child.on('error', (err) => {
      settled = true;
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', onAbort);
      reject(new RipgrepUnavailable(String(err)));
    });
    child.on('close', (code) => {
      exitCode = code;
      // Output held for its turn is judged then, unless the batch was stopped anyway.
      if (live || stopped) settle();
    });
  });
  // A failure is taken up where the batch is awaited; one cancelled first is never awaited.
  end.catch(() => {});
  return { end, cancel: () => cancel() };
}

function settledBatch(end: Promise<SearchEnd>): Batch {
  end.catch(() => {});
  return { end, cancel: () => {} };
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
