import { runProcess } from '../sandbox/process.js';
import type { Clock } from '../util/clock.js';

/** How one hook command ended. */
export interface HookRun {
  command: string;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** Set when the hook did not end by itself with an exit code: it timed out, was killed or never started. */
  failure?: string;
}

export interface HookProcessOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
  clock?: Clock;
}

/** What a hook may print; more is cut (a hook's answer is a line of JSON or a few lines of text). */
const MAX_HOOK_OUTPUT_BYTES = 256 * 1024;

/**
 * Runs one hook command on the host, as the user's own program: with the user's environment, in
 * the workspace, the event as JSON on stdin. The whole process group is killed on timeout or abort.
 * Never throws: a command that cannot start is a run with a `failure`.
 */
export async function runHookCommand(
  command: string,
  input: string,
  opts: HookProcessOptions,
): Promise<HookRun> {
  try {
    const result = await runProcess({
      command,
      cwd: opts.cwd,
      env: opts.env,
      stdin: input,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      clock: opts.clock,
      capture: 'split',
      maxOutputBytes: MAX_HOOK_OUTPUT_BYTES,
    });
    const stdout = result.split?.stdout ?? '';
    const stderr = result.split?.stderr ?? '';
    const failure = result.timedOut
      ? `timed out after ${Math.round(opts.timeoutMs / 1000)}s`
      : result.aborted
        ? 'was cancelled'
        : result.exitCode === null
          ? `was killed by ${result.signal ?? 'a signal'}`
          : undefined;
    return { command, exitCode: result.exitCode, stdout, stderr, ...(failure ? { failure } : {}) };
  } catch (err) {
    return {
      command,
      exitCode: null,
      stdout: '',
      stderr: '',
      failure: `could not start: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}
