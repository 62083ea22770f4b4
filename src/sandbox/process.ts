import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { type Clock, systemClock, type TimerHandle } from '../util/clock.js';
import { Collector } from './output-collector.js';

/** How a command's output is collected; shared by runProcess and every sandbox's exec. */
export interface ProcessIo {
  timeoutMs: number;
  signal?: AbortSignal;
  /**
   * Stops the command at once, SIGKILL with no grace period: a limit was passed (or the sandbox is
   * closing), and a command that traps SIGTERM must not keep writing. The result says `aborted`.
   */
  halt?: AbortSignal;
  /**
   * Output kept in memory. Merged: beyond it the middle is dropped. Split: stdout keeps its
   * beginning and the command is stopped once stdout passes it (for parsers, which need whole
   * records). Default 1 MB.
   */
  maxOutputBytes?: number;
  /** Receives stdout and stderr as they arrive, decoded (a character split between chunks waits for its end). */
  onOutput?: (text: string) => void;
  /**
   * `merged` (default): stdout and stderr interleaved in `output`, as a person reads them.
   * `split`: kept apart in `split`, for callers that parse stdout (git).
   */
  capture?: 'merged' | 'split';
  /** Drives the timeout and the grace periods; the system clock unless a test injects one. */
  clock?: Clock;
  /**
   * What the command reads on stdin: text, written and then closed (hooks read their event there),
   * or a stream piped in as it comes (a long-lived interpreter fed call by call). Unset: no stdin.
   */
  stdin?: string | Readable;
}

export interface RunProcessOptions extends ProcessIo {
  /** A shell command line, run with `bash -c` (or `sh -c` where there is no bash). */
  command: string;
  cwd: string;
  /** The child's whole environment; defaults to this process's. */
  env?: NodeJS.ProcessEnv;
  /**
   * For wrappers whose own exit can lag behind the command's (bwrap's init, which a process inside
   * may stop with ptrace): resolves once the command proper has exited, with how it ended. The call
   * then ends as if the wrapper had exited, and the wrapper's group is killed.
   */
  commandExit?: (pid: number, stop: AbortSignal) => Promise<CommandExit | undefined>;
}

export interface CommandExit {
  exitCode: number | null;
  signal: string | null;
}

export interface ProcessResult {
  /**
   * stdout and stderr interleaved in arrival order; a note marks where the middle was dropped.
   * Empty with `capture: 'split'`.
   */
  output: string;
  /** With `capture: 'split'`. `stdoutCut`: stdout passed maxOutputBytes and the command was stopped. */
  split?: { stdout: string; stderr: string; stdoutCut: boolean };
  /**
   * What the sandbox did about the command besides running it (a protected file it created was
   * removed, say), worded for the model; absent when nothing.
   */
  notices?: string[];
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** Bytes dropped from the middle of the output to respect maxOutputBytes. */
  truncatedBytes: number;
}

/** Between SIGTERM and SIGKILL: long enough for a clean shutdown, short enough not to stall the agent. */
export const KILL_GRACE_MS = 2000;
/**
 * After the main process exits, how long its background children may keep the pipes open before the
 * group is killed. Without this, `sleep 100 &` would hold the call for 100 seconds.
 */
const EXIT_GRACE_MS = 250;

const FALLBACK_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * Runs a command as the leader of a new process group so that the whole tree can be killed at once:
 * on timeout, on abort, and once the main process has exited (background jobs do not outlive the
 * call). Resolves with whatever output arrived, even partial; rejects only if the process could not
 * be started at all.
 *
 * A process that calls setsid() leaves the group and escapes this cleanup; the sandbox (which can
 * use a PID namespace) is where that is closed.
 */
export function runProcess(opts: RunProcessOptions): Promise<ProcessResult> {
  const clock = opts.clock ?? systemClock;
  const started = clock.now();
  const collector = new Collector(opts);
  if (opts.signal?.aborted || opts.halt?.aborted) {
    return Promise.resolve(collector.result(started, { aborted: true }));
  }

  const env = opts.env ?? process.env;
  const shell = findShell(env.PATH ?? FALLBACK_PATH);
  let child: ChildProcess;
  try {
    child = spawn(shell, ['-c', opts.command], {
      cwd: opts.cwd,
      env,
      detached: true,
      stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
  } catch (err) {
    return Promise.reject(err);
  }
  if (opts.stdin !== undefined && child.stdin) {
    // A child that exits without reading all of it closes the pipe early: that is its business.
    child.stdin.on('error', () => undefined);
    if (typeof opts.stdin === 'string') child.stdin.end(opts.stdin);
    else opts.stdin.pipe(child.stdin);
  }

  return new Promise<ProcessResult>((resolve, reject) => {
    const pid = child.pid;
    let exitCode: number | null = null;
    let exitSignal: string | null = null;
    let exited = false;
    let openPipes = 2;
    let timedOut = false;
    let aborted = false;
    let terminating = false;
    let settled = false;
    const timers: TimerHandle[] = [];
    const stopWatching = new AbortController();

    const killGroup = (sig: NodeJS.Signals) => {
      if (pid === undefined) return;
      try {
        process.kill(-pid, sig);
      } catch {
        // ESRCH: the group is already gone, which is what we wanted.
      }
    };

    const groupExists = () => {
      if (pid === undefined) return false;
      try {
        process.kill(-pid, 0);
        return true;
      } catch {
        return false;
      }
    };

    const finish = () => {
      if (settled) return;
      settled = true;
      for (const t of timers) clock.clearTimeout(t);
      stopWatching.abort();
      opts.signal?.removeEventListener('abort', onAbort);
      opts.halt?.removeEventListener('abort', onHalt);
      // Stragglers are background jobs of an exited command: ask them to stop, then insist.
      killGroup('SIGTERM');
      if (groupExists()) clock.setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS).unref();
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve(
        collector.result(started, { exitCode, signal: exitSignal, timedOut, aborted: aborted && !timedOut }),
      );
    };

    const terminate = () => {
      if (terminating || settled) return;
      terminating = true;
      killGroup('SIGTERM');
      timers.push(
        clock.setTimeout(() => {
          killGroup('SIGKILL');
          // A process stuck in the kernel may not die even now; do not wait for it forever.
          timers.push(clock.setTimeout(finish, KILL_GRACE_MS));
        }, KILL_GRACE_MS),
      );
    };

    const onAbort = () => {
      aborted = true;
      terminate();
    };

    const onHalt = () => {
      if (settled) return;
      aborted = true;
      terminating = true;
      killGroup('SIGKILL');
      timers.push(clock.setTimeout(finish, KILL_GRACE_MS));
    };

    const onPipeClosed = () => {
      openPipes -= 1;
      if (exited && openPipes === 0) finish();
    };

    const onExit = (code: number | null, sig: string | null) => {
      if (exited) return;
      exited = true;
      exitCode = code;
      exitSignal = sig;
      if (openPipes === 0) finish();
      else timers.push(clock.setTimeout(finish, EXIT_GRACE_MS));
    };

    collector.listen(child, terminate);
    child.stdout?.on('close', onPipeClosed);
    child.stderr?.on('close', onPipeClosed);

    child.on('error', (err) => {
      if (pid === undefined && !settled) {
        settled = true;
        for (const t of timers) clock.clearTimeout(t);
        opts.signal?.removeEventListener('abort', onAbort);
        opts.halt?.removeEventListener('abort', onHalt);
        reject(err);
      }
    });

    child.on('exit', onExit);

    if (pid === undefined) return;
    opts.commandExit?.(pid, stopWatching.signal).then(
      (ended) => {
        if (ended && !terminating) onExit(ended.exitCode, ended.signal);
      },
      () => undefined,
    );
    timers.push(
      clock.setTimeout(() => {
        timedOut = true;
        terminate();
      }, opts.timeoutMs),
    );
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.halt?.aborted) onHalt();
    else opts.halt?.addEventListener('abort', onHalt, { once: true });
  });
}

/** The first `bash` on PATH, else the first `sh`, else /bin/sh. */
export function findShell(searchPath: string): string {
  const dirs = searchPath.split(path.delimiter).filter((d) => d !== '');
  for (const name of ['bash', 'sh']) {
    for (const dir of dirs) {
      const candidate = path.join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // Not here; keep looking.
      }
    }
  }
  return '/bin/sh';
}

/** The output-handling fields of a request, to hand on to runProcess. */
export function processIo(req: ProcessIo): ProcessIo {
  const { timeoutMs, signal, halt, maxOutputBytes, onOutput, capture, stdin } = req;
  return { timeoutMs, signal, halt, maxOutputBytes, onOutput, capture, stdin };
}
