/**
 * How runProcess (./process.ts) keeps a command's output: merged or split as `capture` asks, within
 * a byte budget, so memory stays bounded however much a command prints.
 */
import type { ChildProcess } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { systemClock } from '../util/clock.js';
import type { ProcessIo, ProcessResult } from './process.js';

const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

type Outcome = Partial<Pick<ProcessResult, 'exitCode' | 'signal' | 'timedOut' | 'aborted'>>;

/** Gathers a command's output the way `capture` asks for, within the byte budget. */
export class Collector {
  private readonly merged: OutputBuffer | undefined;
  private readonly stdout: HeadBuffer | undefined;
  private readonly stderr: OutputBuffer | undefined;

  constructor(private readonly io: ProcessIo) {
    const max = io.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    if (io.capture === 'split') {
      this.stdout = new HeadBuffer(max);
      this.stderr = new OutputBuffer(max);
    } else {
      this.merged = new OutputBuffer(max);
    }
  }

  /** `onStdoutFull` is called when split stdout passes its budget: the caller stops the command. */
  listen(child: ChildProcess, onStdoutFull: () => void): void {
    const attach = (stream: NodeJS.ReadableStream | null, push: (chunk: Buffer) => void) => {
      const decoder = this.io.onOutput ? new StringDecoder('utf8') : undefined;
      stream?.on('data', (chunk: Buffer) => {
        push(chunk);
        if (decoder) this.io.onOutput?.(decoder.write(chunk));
      });
    };
    const { merged, stdout, stderr } = this;
    if (merged) {
      attach(child.stdout, (chunk) => merged.push(chunk));
      attach(child.stderr, (chunk) => merged.push(chunk));
    } else if (stdout && stderr) {
      attach(child.stdout, (chunk) => {
        if (!stdout.push(chunk)) onStdoutFull();
      });
      attach(child.stderr, (chunk) => stderr.push(chunk));
    }
  }

  result(started: number, fields: Outcome): ProcessResult {
    const common = {
      exitCode: fields.exitCode ?? null,
      signal: fields.signal ?? null,
      timedOut: fields.timedOut ?? false,
      aborted: fields.aborted ?? false,
      durationMs: Math.round((this.io.clock ?? systemClock).now() - started),
    };
    const { merged, stdout, stderr } = this;
    if (merged || !stdout || !stderr) {
      return { output: merged?.text() ?? '', truncatedBytes: merged?.droppedBytes ?? 0, ...common };
    }
    return {
      output: '',
      split: { stdout: stdout.text(), stderr: stderr.text(), stdoutCut: stdout.full },
      truncatedBytes: stdout.droppedBytes + stderr.droppedBytes,
      ...common,
    };
  }
}

/** Keeps the first `max` bytes; `push` returns false once more than that has arrived. */
class HeadBuffer {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  droppedBytes = 0;
  full = false;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): boolean {
    const take = Math.max(0, Math.min(chunk.length, this.max - this.bytes));
    if (take > 0) {
      this.chunks.push(chunk.subarray(0, take));
      this.bytes += take;
    }
    if (chunk.length > take) {
      this.droppedBytes += chunk.length - take;
      this.full = true;
    }
    return !this.full;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/**
 * Keeps the first half of the budget as it arrives and a rolling window of the most recent bytes
 * for the second half, so memory stays bounded however much a command prints.
 */
class OutputBuffer {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  droppedBytes = 0;

  constructor(maxBytes: number) {
    this.headLimit = Math.floor(Math.max(0, maxBytes) / 2);
    this.tailLimit = Math.max(0, maxBytes) - this.headLimit;
  }

  push(chunk: Buffer): void {
    let rest = chunk;
    if (this.headBytes < this.headLimit) {
      const take = Math.min(rest.length, this.headLimit - this.headBytes);
      this.head.push(rest.subarray(0, take));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tailBytes > this.tailLimit) {
      const first = this.tail[0];
      if (!first) break;
      const excess = this.tailBytes - this.tailLimit;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
        this.droppedBytes += first.length;
      } else {
        // Copy so the rest of the large original chunk can be garbage-collected.
        this.tail[0] = Buffer.from(first.subarray(excess));
        this.tailBytes -= excess;
        this.droppedBytes += excess;
      }
    }
  }

  text(): string {
    // Decoded together when nothing was dropped, so a character split across the halves survives.
    if (this.droppedBytes === 0) return Buffer.concat([...this.head, ...this.tail]).toString('utf8');
    const head = Buffer.concat(this.head).toString('utf8');
    const tail = Buffer.concat(this.tail).toString('utf8');
    const sep = head.endsWith('\n') || head === '' ? '' : '\n';
    return `${head}${sep}[... ${this.droppedBytes.toLocaleString('en-US')} bytes of output cut ...]\n${tail}`;
  }
}
