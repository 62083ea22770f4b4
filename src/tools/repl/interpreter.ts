import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { shellQuote } from '../../sandbox/host-command.js';
import type { ProcessResult, Sandbox } from '../../sandbox/types.js';

/**
 * A long-lived interpreter inside the session's sandbox: one `sandbox.exec` that lasts as long as
 * the interpreter, fed requests on stdin (drivers.ts has the protocol). It is started on the first
 * call and again after it died or was killed at a call's timeout, which loses its state; the
 * result says so.
 *
 * The sandbox's after-command checks (protected files a command created are undone) run when the
 * interpreter ends, not after each call.
 */
export interface CellResult {
  stdout: string;
  stderr: string;
  /** The last expression's value, as the language prints it; null when there was none. */
  value: string | null;
  error: string | null;
  /** Written to the raw stdout (not through print/console), before the answer. */
  stray: string;
}

/** `restarted`: this call started a new interpreter after an earlier one was lost. */
export type CellOutcome =
  | { kind: 'done'; result: CellResult; restarted: boolean }
  | { kind: 'timeout'; stray: string }
  | { kind: 'died'; output: string; exitCode: number | null; signal: string | null; restarted: boolean };

export interface InterpreterSpec {
  /** The command line that starts it, given the marker. */
  command(marker: string): string;
}

/** How long one interpreter may live, across all its calls. */
const LIFETIME_MS = 12 * 60 * 60 * 1000;

export class Interpreter {
  private running?: {
    input: PassThrough;
    marker: string;
    ended: Promise<ProcessResult>;
    stop: AbortController;
    /** Output since the last answer. */
    pending: string;
    onText?: () => void;
  };

  private starts = 0;

  constructor(
    private readonly sandbox: Sandbox,
    private readonly cwd: string,
    private readonly spec: InterpreterSpec,
  ) {}

  /** Runs one cell; never throws for what the code did. */
  async run(code: string, timeoutMs: number, signal: AbortSignal): Promise<CellOutcome> {
    const restarted = this.running === undefined && this.starts > 0;
    const proc = this.running ?? this.start();
    proc.input.write(`${JSON.stringify({ code })}\n`);
    const answer = new Promise<CellResult>((resolve) => {
      const check = () => {
        const found = takeAnswer(proc.pending, proc.marker);
        if (!found) return;
        proc.pending = found.rest;
        proc.onText = undefined;
        resolve(found.result);
      };
      proc.onText = check;
      check();
    });
    let timer: NodeJS.Timeout | undefined;
    let onAbort = () => {};
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
      onAbort = () => resolve('timeout');
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const first = await Promise.race([answer, proc.ended, timedOut]);
      if (first === 'timeout') {
        const stray = proc.pending;
        await this.stop();
        return { kind: 'timeout', stray };
      }
      if ('exitCode' in first) {
        this.running = undefined;
        return {
          kind: 'died',
          output: proc.pending || first.output.slice(-4000),
          exitCode: first.exitCode,
          signal: first.signal,
          restarted,
        };
      }
      return { kind: 'done', result: first, restarted };
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Ends the interpreter and waits until its processes are gone. */
  async stop(): Promise<void> {
    const proc = this.running;
    if (!proc) return;
    this.running = undefined;
    proc.input.end();
    proc.stop.abort();
    await proc.ended.catch(() => undefined);
  }

  private start() {
    this.starts++;
    const marker = `__hearth_cell_${randomBytes(8).toString('hex')}:`;
    const input = new PassThrough();
    const stop = new AbortController();
    const proc: NonNullable<Interpreter['running']> = {
      input,
      marker,
      stop,
      pending: '',
      ended: Promise.resolve() as unknown as Promise<ProcessResult>,
    };
    proc.ended = this.sandbox.exec({
      command: this.spec.command(marker),
      cwd: this.cwd,
      timeoutMs: LIFETIME_MS,
      signal: stop.signal,
      stdin: input,
      maxOutputBytes: 64 * 1024,
      onOutput: (text) => {
        proc.pending += text;
        proc.onText?.();
      },
    });
    // An interpreter that could not start at all ends the same way as one that died.
    proc.ended = proc.ended.catch(
      (err: Error): ProcessResult => ({
        output: err.message,
        exitCode: null,
        signal: null,
        timedOut: false,
        aborted: false,
        durationMs: 0,
        truncatedBytes: 0,
      }),
    );
    this.running = proc;
    return proc;
  }
}

/** Finds the answer line in the output so far: text before it is stray output. */
function takeAnswer(text: string, marker: string): { result: CellResult; rest: string } | undefined {
  const at = text.indexOf(`\n${marker}`);
  if (at < 0) return undefined;
  const start = at + 1 + marker.length;
  const end = text.indexOf('\n', start);
  if (end < 0) return undefined;
  const body = JSON.parse(text.slice(start, end)) as Omit<CellResult, 'stray'>;
  return { result: { ...body, stray: text.slice(0, at) }, rest: text.slice(end + 1) };
}

export function driverCommand(program: string, flags: string[], driver: string, marker: string): string {
  return [program, ...flags, shellQuote(driver), shellQuote(marker)].join(' ');
}
