import { type ExecFileException, execFile } from 'node:child_process';
import path from 'node:path';
import { errorMessage } from '../path-guard.js';
import { type ToolContext, ToolError } from '../types.js';

export interface GitRunnerOptions {
  /**
   * The environment git starts from, before the runner adds its own settings; defaults to this
   * process's, read at each call. Tests pass a bare one (empty HOME, GIT_CONFIG_NOSYSTEM=1).
   */
  env?: NodeJS.ProcessEnv;
  /** The git executable, looked up on the PATH of `env` when it has no slash. Default `git`. */
  binary?: string;
  /** Default time limit of one git call. */
  timeoutMs?: number;
}

export interface GitCallOptions {
  timeoutMs?: number;
  /** Output kept per stream; beyond it git is stopped and `truncated` is set. Default 4 MB. */
  maxBytes?: number;
}

/** One finished git call. A nonzero exit is a result, not a throw: callers word their own errors. */
export interface GitResult {
  args: string[];
  exitCode: number;
  stdout: string;
  stderr: string;
  /** stdout hit `maxBytes` and git was stopped early; stdout holds the beginning. */
  truncated: boolean;
}

export interface GitRunner {
  /**
   * Runs `git <args>` in the workspace without a shell. Throws ToolError when git cannot be
   * started, times out, is cancelled, or finds no repository, since no tool can go on from those.
   */
  run(ctx: ToolContext, args: string[], opts?: GitCallOptions): Promise<GitResult>;
}

const GIT_DEFAULT_TIMEOUT_MS = 30_000;
const GIT_DEFAULT_MAX_BYTES = 4 * 1024 * 1024;

// Left over from a parent git process (Hearth started from a hook, say), these would point git at
// another repository than the workspace.
const REPO_SELECTING_VARS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_DISCOVERY_ACROSS_FILESYSTEM',
];

// Flags that keep output plain and parseable whatever the user's config says.
const GLOBAL_ARGS = ['--no-pager', '-c', 'color.ui=false', '-c', 'core.quotePath=false'];

export function createGitRunner(options: GitRunnerOptions = {}): GitRunner {
  const binary = options.binary ?? 'git';
  return {
    run(ctx, args, opts = {}) {
      const env = gitEnv(options.env ?? process.env, ctx.workspace);
      const timeoutMs = opts.timeoutMs ?? options.timeoutMs ?? GIT_DEFAULT_TIMEOUT_MS;
      const maxBytes = opts.maxBytes ?? GIT_DEFAULT_MAX_BYTES;
      const fullArgs = [...GLOBAL_ARGS, ...args];
      const label = `git ${args.find((a) => !a.startsWith('-')) ?? ''}`.trim();
      return new Promise<GitResult>((resolve, reject) => {
        if (ctx.signal.aborted) {
          reject(new ToolError('Cancelled.'));
          return;
        }
        execFile(
          binary,
          fullArgs,
          {
            cwd: ctx.workspace,
            env,
            timeout: timeoutMs,
            signal: ctx.signal,
            maxBuffer: maxBytes,
            encoding: 'utf8',
            windowsHide: true,
          },
          (err, stdout, stderr) => {
            const result: GitResult = { args, exitCode: 0, stdout, stderr, truncated: false };
            if (err) {
              const failure = classify(err, ctx, label, timeoutMs, binary);
              if (failure === 'truncated') {
                result.truncated = true;
              } else if (failure instanceof ToolError) {
                reject(failure);
                return;
              } else {
                result.exitCode = failure;
              }
            }
            if (result.exitCode !== 0 && /not a git repository/i.test(stderr)) {
              reject(new ToolError(notRepoMessage(ctx.workspace)));
              return;
            }
            resolve(result);
          },
        );
      });
    },
  };
}

function notRepoMessage(workspace: string): string {
  return `Not a git repository: ${workspace}. Run \`git init\` with the shell tool if you want one.`;
}

function gitEnv(base: NodeJS.ProcessEnv, workspace: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const name of REPO_SELECTING_VARS) delete env[name];
  // gettext would otherwise prefer LANGUAGE to the C locale set below.
  delete env.LANGUAGE;
  return {
    ...env,
    // Nothing may wait for a person: no credential prompts, no pager, no editor.
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: 'true',
    // English messages, which the tools recognise and turn into advice.
    LC_ALL: 'C',
    NO_COLOR: '1',
    // Read-only commands such as status must not take the index lock from under the user's own git.
    GIT_OPTIONAL_LOCKS: '0',
    // Only a repository at the workspace root counts; one above it would reach files outside.
    GIT_CEILING_DIRECTORIES: path.dirname(workspace),
  };
}

function classify(
  err: ExecFileException,
  ctx: ToolContext,
  label: string,
  timeoutMs: number,
  binary: string,
): ToolError | 'truncated' | number {
  if (err.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') return 'truncated';
  if (ctx.signal.aborted || err.name === 'AbortError') return new ToolError('Cancelled.');
  if (err.code === 'ENOENT' || err.code === 'EACCES') {
    return new ToolError(
      `Could not run ${binary} (${err.code}): git is not installed or not on PATH. Install git to use the git tools.`,
    );
  }
  if (typeof err.code === 'number') return err.code;
  if (err.killed) {
    return new ToolError(`${label} timed out after ${seconds(timeoutMs)}s and was stopped.`);
  }
  if (err.signal) return new ToolError(`${label} was killed by ${err.signal}.`);
  return new ToolError(`Could not run ${label}: ${errorMessage(err)}`);
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1);
}

const GIT_MESSAGE_MAX_LINES = 15;
const GIT_MESSAGE_MAX_CHARS = 2000;

/**
 * What git said about a failure, for the model: stderr (or stdout when stderr is empty, as for
 * `nothing to commit`), without the `hint:` and `(use "git ...")` lines written for people, and capped.
 */
export function gitMessage(r: GitResult, opts: { both?: boolean } = {}): string {
  const streams = opts.both ? [r.stderr, r.stdout] : [r.stderr.trim() !== '' ? r.stderr : r.stdout];
  const lines = streams
    .join('\n')
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '' && !l.startsWith('hint:') && !/^\s*\(use "git /.test(l));
  let kept = lines.slice(0, GIT_MESSAGE_MAX_LINES);
  if (kept.join('\n').length > GIT_MESSAGE_MAX_CHARS) {
    kept = [kept.join('\n').slice(0, GIT_MESSAGE_MAX_CHARS)];
  }
  const more = lines.length - kept.length;
  if (more > 0) kept.push(`[... ${more} more lines]`);
  return kept.join('\n');
}

/**
 * A ToolError of one readable line (what went wrong, what to do) followed by git's own words,
 * so the model has both the advice and the evidence.
 */
export function gitFailure(readable: string, r: GitResult, opts: { both?: boolean } = {}): ToolError {
  const said = gitMessage(r, opts);
  const fallback = `git ${r.args.join(' ')} exited with code ${r.exitCode}`;
  return new ToolError(`${readable}\ngit: ${said === '' ? fallback : said}`);
}
