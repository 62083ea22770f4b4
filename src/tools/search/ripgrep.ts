import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import type { SearchScope } from './scope.js';

/**
 * Running ripgrep for grep and glob. ripgrep walks the tree itself, on all cores, skipping
 * binary files early; the flags below make it see exactly what the built-in walker sees (see
 * scope.ts), so the two engines agree: hidden files included, .gitignore honoured outside a git
 * repository too, no global or `.ignore` files, nothing read above the workspace (the ignore
 * files between it and the searched directory are passed in instead), symlinks not followed.
 */

const STDERR_KEEP = 4096;

/**
 * `auto` uses ripgrep when it is on PATH and HEARTH_NO_RIPGREP is not `1`, else the built-in
 * engine; `ripgrep` insists on rg (an error without it); `scan` never uses it.
 */
export type GrepEngine = 'auto' | 'ripgrep' | 'scan';

/** Finds rg once per tool; the opt-out variable is read on every call so it can be flipped. */
export function ripgrepFinder(options: { engine?: GrepEngine; env?: NodeJS.ProcessEnv }) {
  let found: { path: string | undefined } | undefined;
  return (): string | undefined => {
    const env = options.env ?? process.env;
    const engine = options.engine ?? 'auto';
    if (engine === 'scan' || (engine === 'auto' && env.HEARTH_NO_RIPGREP === '1')) return undefined;
    found ??= { path: findRipgrep(env.PATH ?? '') };
    if (!found.path && engine === 'ripgrep') {
      throw new Error('ripgrep (rg) was required but is not on PATH.');
    }
    return found.path;
  };
}

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

/**
 * Flags that make rg walk `scope` as the built-in walker does; `fileName` (see globFileName)
 * lets it skip files by name early. rg must run in the workspace: the paths here are relative to it.
 */
export function scopeArgs(scope: SearchScope, fileName?: string): string[] {
  const args = [
    '--no-config',
    '--hidden',
    '--no-require-git',
    '--no-ignore-global',
    '--no-ignore-dot',
    '--no-ignore-parent',
  ];
  for (const f of scope.inherited) args.push(`--ignore-file=${f.file}`);
  for (const pattern of scope.exclude) args.push(`--glob=!${pattern}`);
  if (fileName) args.push(`--type-add=hearth:${fileName}`, '--type=hearth');
  return args;
}

/** The scope's root as rg is given it; rg prints paths under it as `./x` for the workspace itself. */
export function rootArg(scope: SearchScope): string {
  return scope.rootPath === '' ? '.' : scope.rootPath;
}

/** A path as rg printed it, workspace-relative with `/` separators. */
export function fromRipgrepPath(printed: string): string {
  const p = path.sep === '/' ? printed : printed.replaceAll(path.sep, '/');
  return p.startsWith('./') ? p.slice(2) : p;
}

/** Thrown when rg cannot be started or crashes, so the caller can fall back to the built-in engine. */
export class RipgrepUnavailable extends Error {
  override name = 'RipgrepUnavailable';
}

export interface RipgrepRun {
  rgPath: string;
  args: string[];
  /** The workspace. */
  cwd: string;
  signal: AbortSignal;
  /** Epoch milliseconds at which rg is stopped, if any. */
  deadline?: number;
  /** Each piece of rg's output as it comes. */
  onStdout(chunk: Buffer): void;
  /** Each `--debug` line rg prints; they are not kept as error text. */
  onDebug?(line: string): void;
}

export interface RipgrepExit {
  /** rg's exit code; null when it was stopped. */
  code: number | null;
  /** Why it was stopped early, if it was. */
  stopped?: 'timeout' | 'stop';
  /** The start of what rg printed to stderr, `--debug` lines left out. */
  stderr: string;
}

/**
 * Runs rg to its end, or until `stop()`, the deadline or an abort (which rejects with the
 * signal's reason). A failure to start rejects with RipgrepUnavailable.
 */
export function runRipgrep(run: RipgrepRun): { exit: Promise<RipgrepExit>; stop(): void } {
  let stop = () => {};
  const exit = new Promise<RipgrepExit>((resolve, reject) => {
    run.signal.throwIfAborted();
    let child: ChildProcess;
    try {
      child = spawn(run.rgPath, run.args, {
        cwd: run.cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (err) {
      reject(new RipgrepUnavailable(String(err)));
      return;
    }
    let stopped: RipgrepExit['stopped'] | 'aborted' | undefined;
    let stderr = '';
    let partial = '';
    const kill = (why: typeof stopped) => {
      if (stopped) return;
      stopped = why;
      child.kill('SIGKILL');
    };
    stop = () => kill('stop');
    const onAbort = () => kill('aborted');
    run.signal.addEventListener('abort', onAbort, { once: true });
    const { deadline } = run;
    const timer =
      deadline === undefined
        ? undefined
        : setTimeout(() => kill('timeout'), Math.max(0, deadline - Date.now()));
    const cleanUp = () => {
      clearTimeout(timer);
      run.signal.removeEventListener('abort', onAbort);
    };
    const stderrLine = (line: string) => {
      if (/^(?:rg: )?DEBUG\|/.test(line)) run.onDebug?.(line);
      else if (stderr.length < STDERR_KEEP) stderr += `${line}\n`;
    };

    child.stdout?.on('data', (chunk: Buffer) => {
      if (!stopped) run.onStdout(chunk);
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) stderrLine(line);
    });
    child.on('error', (err) => {
      cleanUp();
      reject(new RipgrepUnavailable(String(err)));
    });
    child.on('close', (code) => {
      cleanUp();
      if (partial !== '') stderrLine(partial);
      if (stopped === 'aborted') reject(run.signal.reason);
      else resolve({ code: stopped ? null : code, stopped, stderr: stderr.trim() });
    });
  });
  // A failure is taken up where `exit` is awaited.
  exit.catch(() => {});
  return { exit, stop: () => stop() };
}
