import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

export interface HostCommandResult {
  ok: boolean;
  /** The executable was not found. */
  missing: boolean;
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a short-lived helper on the host (engine probes, `git config`, `bwrap --version`), never a
 * command chosen by the model. Resolves in every case.
 */
export function runHostCommand(
  file: string,
  args: string[],
  opts: { timeoutMs?: number; cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<HostCommandResult> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        timeout: opts.timeoutMs ?? 5000,
        killSignal: 'SIGKILL',
        cwd: opts.cwd,
        env: opts.env,
        maxBuffer: 4 * 1024 * 1024,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        resolve({
          ok: !err,
          missing: err?.code === 'ENOENT',
          code,
          stdout: String(stdout ?? ''),
          stderr: String(stderr ?? ''),
        });
      },
    );
  });
}

/** The first executable named `name` on the search path, as an absolute path. */
export function findExecutable(name: string, searchPath: string | undefined): string | null {
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    if (dir === '' || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this directory.
    }
  }
  return null;
}

const SAFE_WORD = /^[A-Za-z0-9_/.,:=+@%-]+$/;

/** Quotes one word for bash/sh so that it reaches the program unchanged. */
export function shellQuote(word: string): string {
  if (SAFE_WORD.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

export function shellJoin(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}

/** The first non-empty line of a helper's complaint, for error messages. */
export function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '') ?? ''
  );
}
