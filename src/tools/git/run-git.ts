/*
 * How the git tools run git, and why (issue 12, class 1).
 *
 * A repository is something the sandbox can write: its config can name programs for git to run
 * (core.fsmonitor, core.hooksPath, filter and diff drivers, pagers, editors, ssh and credential
 * helpers, gpg), its hooks are programs, an include can pull settings from anywhere, and a `.git`
 * file, `.git` link, `commondir`, alternates or core.worktree can point git at another repository.
 * So the git tools never run git on the host as Hearth: every call goes through the session's
 * sandbox (`ctx.sandbox.exec`), exactly like a shell command, and whatever the repository makes git
 * run runs confined, with the sandbox's filesystem, network and limits. Output stays as before:
 * stdout and stderr apart (`capture: 'split'`), parsed from -z records, pathspecs literal.
 *
 * Before each call the repository's location is checked. On the host, from the files alone
 * (sandbox/repo-location.ts): `.git` (directory, file or link), `commondir`, alternates and the
 * submodules `.gitmodules` declares must lead to places inside the workspace. Then `git rev-parse`,
 * run the same confined way, must name a git directory, common directory and work tree inside it
 * (core.worktree). Anything else is refused with a message that says where it leads.
 *
 * With no sandbox (mode `none`, or `auto` finding none) git runs unconfined like every command, and
 * as a second line the call neutralises what it can: hooks (core.hooksPath=/dev/null), fsmonitor,
 * every transport (protocol.allow=never), and each setting from the repository's own config (its
 * local and worktree scopes, includes counted) that git-code-keys.ts lists as running a program,
 * overridden with an empty value through GIT_CONFIG_COUNT, which git also hands to submodules. Such a
 * list cannot be complete for every future git; the sandbox is the boundary, this is depth.
 *
 * The commit identity: each sandbox gives its git the user's own identity as ~/.gitconfig, read
 * from the user's global or system config on the host (never from the repository), and a
 * repository's own user.name/user.email still win, as on the host. Without a sandbox git reads the
 * user's real configuration.
 */

import path from 'node:path';
import { isRiskyGitKey } from '../../sandbox/git-code-keys.js';
import { shellQuote } from '../../sandbox/host-command.js';
import type { ProcessResult } from '../../sandbox/process.js';
import { escapingSubmodules, locateRepository } from '../../sandbox/repo-location.js';
import { isWithin } from '../../sandbox/workspace.js';
import { errorMessage } from '../path-guard.js';
import { type ToolContext, ToolError } from '../types.js';

export interface GitRunnerOptions {
  /** The git executable as the sandbox sees it, looked up on its PATH when it has no slash. Default `git`. */
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
  /** What the sandbox undid after the call (a file a hook created where it may not), for the model. */
  notices?: string[];
}

export interface GitRunner {
  /**
   * Runs `git <args>` in the workspace, in the sandbox. Throws ToolError when git cannot be
   * started, times out, is cancelled, finds no repository, or finds one that leaves the workspace,
   * since no tool can go on from those.
   */
  run(ctx: ToolContext, args: string[], opts?: GitCallOptions): Promise<GitResult>;
}

const GIT_DEFAULT_TIMEOUT_MS = 30_000;
const GIT_DEFAULT_MAX_BYTES = 4 * 1024 * 1024;
const PROBE_TIMEOUT_MS = 15_000;
const PROBE_MAX_BYTES = 1024 * 1024;

// Left over from a parent git process (Hearth started from a hook, say), or let through by the
// sandbox's env settings, these would point git at another repository than the workspace.
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
  'GIT_CONFIG',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
  'GIT_EXTERNAL_DIFF',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_ASKPASS',
  // gettext would otherwise prefer LANGUAGE to the C locale set below.
  'LANGUAGE',
];

// Flags that keep output plain and parseable whatever the user's config says.
const GLOBAL_ARGS = ['--no-pager', '-c', 'color.ui=false', '-c', 'core.quotePath=false'];

/** Overrides for unsandboxed git, whatever the repository says (see the header). */
const UNCONFINED_FIXED: Array<[string, string]> = [
  ['core.hooksPath', '/dev/null'],
  ['core.fsmonitor', 'false'],
  ['protocol.allow', 'never'],
];

/** Config scopes the repository controls; includes count as the scope that included them. */
const REPO_SCOPES = new Set(['local', 'worktree']);
/** Redirects the location check already judged; overriding them would break a legitimate set-up. */
const NOT_OVERRIDDEN = new Set(['core.worktree', 'include.path']);

export function createGitRunner(options: GitRunnerOptions = {}): GitRunner {
  const binary = options.binary ?? 'git';
  return {
    async run(ctx, args, opts = {}) {
      if (ctx.signal.aborted) throw new ToolError('Cancelled.');
      const label = `git ${args.find((a) => !a.startsWith('-')) ?? ''}`.trim();
      const unconfined = ctx.sandbox.kind === 'none';
      const overrides = await checkLocation(ctx, binary, unconfined);
      const timeoutMs = opts.timeoutMs ?? options.timeoutMs ?? GIT_DEFAULT_TIMEOUT_MS;
      const command = `${prelude(ctx.workspace, overrides)}; exec ${gitLine(binary, [...GLOBAL_ARGS, ...args])}`;
      const r = await execGit(ctx, command, {
        label,
        timeoutMs,
        maxBytes: opts.maxBytes ?? GIT_DEFAULT_MAX_BYTES,
        binary,
      });
      const result: GitResult = { args, ...r };
      if (result.exitCode !== 0 && /not a git repository/i.test(result.stderr)) {
        throw new ToolError(notRepoMessage(ctx.workspace));
      }
      return result;
    },
  };
}

/**
 * Refuses a repository that leads out of the workspace; returns the overrides the call needs
 * (none in a sandbox, the neutralisers without one).
 */
async function checkLocation(
  ctx: ToolContext,
  binary: string,
  unconfined: boolean,
): Promise<Array<[string, string]>> {
  const workspace = ctx.workspace;
  const linked = ctx.sandbox.linkedRepo;
  const repo = await locateRepository(workspace, linked);
  const escapes = [...repo.outside, ...(await escapingSubmodules(workspace))];
  if (escapes.length > 0) throw leavesWorkspace(escapes);

  const probeArgs = [
    'rev-parse',
    '--path-format=absolute',
    '--absolute-git-dir',
    '--git-common-dir',
    '--show-toplevel',
  ];
  // Without a sandbox the call must also know which of the repository's settings to neutralise.
  const listConfig = ['config', '-z', '--show-scope', '--name-only', '--list'];
  const probe =
    `${prelude(workspace, [])}; ${gitLine(binary, probeArgs)}` +
    (unconfined ? ` && printf '\\0' && exec ${gitLine(binary, listConfig)}` : '');
  const r = await execGit(ctx, probe, {
    label: 'git rev-parse',
    timeoutMs: PROBE_TIMEOUT_MS,
    maxBytes: PROBE_MAX_BYTES,
    binary,
  });
  if (r.exitCode !== 0) {
    if (/not a git repository/i.test(r.stderr)) throw new ToolError(notRepoMessage(workspace));
    if (/must be run in a work tree/i.test(r.stderr)) {
      throw new ToolError(
        `${workspace} is a bare repository or a git directory; the git tools need a work tree.`,
      );
    }
    throw gitFailure('Could not find the repository.', { args: probeArgs, ...r });
  }
  const cut = r.stdout.indexOf('\0');
  const located = cut < 0 ? r.stdout : r.stdout.slice(0, cut);
  const config = cut < 0 ? '' : r.stdout.slice(cut + 1);
  const named = located.split('\n').filter((l) => l !== '');
  const where = ['git directory', 'common directory', 'work tree'];
  // A Hearth worktree's git directory and common directory are its main repository's (linked-repo.ts).
  const granted = (p: string, i: number) =>
    linked !== undefined && i < 2 && p === (i === 0 ? linked.gitDir : linked.commonDir);
  const outside = named.flatMap((p, i) =>
    isWithin(workspace, path.resolve(p)) || granted(path.resolve(p), i) ? [] : [`the ${where[i]} is ${p}`],
  );
  if (outside.length > 0) throw leavesWorkspace(outside);
  return unconfined ? [...UNCONFINED_FIXED, ...repositoryRisks(config)] : [];
}

/**
 * The code-running keys the repository's own config sets, each with a value that runs nothing: empty
 * (git then skips a filter and refuses an empty program), or `cat` for a textconv, which git would
 * otherwise fail to run and so fail the whole diff.
 */
function repositoryRisks(listing: string): Array<[string, string]> {
  const fields = listing.split('\0');
  const keys = new Set<string>();
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const scope = fields[i]!;
    const key = fields[i + 1]!;
    if (REPO_SCOPES.has(scope) && isRiskyGitKey(key) && !NOT_OVERRIDDEN.has(key.toLowerCase())) keys.add(key);
  }
  return [...keys].map((key) => [key, /\.textconv$/i.test(key) ? 'cat' : '']);
}

function leavesWorkspace(escapes: string[]): ToolError {
  return new ToolError(
    `Refusing to run git: the repository leads outside the workspace (${escapes.join('; ')}). ` +
      'The git tools only work on a repository inside the workspace. Ask the user to check the repository set-up.',
  );
}

function gitLine(binary: string, args: string[]): string {
  return [binary, ...args].map(shellQuote).join(' ');
}

/**
 * What every git call starts with: the repository-selecting variables cleared, plain and
 * non-interactive settings, and the overrides as GIT_CONFIG_* pairs (no quoting trouble with `=` or
 * dots in a key, unlike `-c`).
 */
function prelude(workspace: string, overrides: Array<[string, string]>): string {
  const vars: Array<[string, string]> = [
    // Nothing may wait for a person: no credential prompts, no pager, no editor.
    ['GIT_TERMINAL_PROMPT', '0'],
    ['GIT_PAGER', 'cat'],
    ['PAGER', 'cat'],
    ['GIT_EDITOR', 'true'],
    ['GIT_SEQUENCE_EDITOR', 'true'],
    // English messages, which the tools recognise and turn into advice.
    ['LC_ALL', 'C'],
    ['NO_COLOR', '1'],
    // Read-only commands such as status must not take the index lock from under the user's own git.
    ['GIT_OPTIONAL_LOCKS', '0'],
    // Only a repository at the workspace root counts; one above it would reach files outside.
    ['GIT_CEILING_DIRECTORIES', path.dirname(workspace)],
  ];
  if (overrides.length > 0) {
    vars.push(['GIT_CONFIG_COUNT', String(overrides.length)]);
    overrides.forEach(([key, value], i) => {
      vars.push([`GIT_CONFIG_KEY_${i}`, key], [`GIT_CONFIG_VALUE_${i}`, value]);
    });
  }
  const exports = vars.map(([name, value]) => `${name}=${shellQuote(value)}`).join(' ');
  return `unset ${REPO_SELECTING_VARS.join(' ')}; export ${exports}`;
}

/** Runs one script in the sandbox and turns what cannot be a git result into a ToolError. */
async function execGit(
  ctx: ToolContext,
  command: string,
  o: { label: string; timeoutMs: number; maxBytes: number; binary: string },
): Promise<Omit<GitResult, 'args'>> {
  let r: ProcessResult;
  try {
    r = await ctx.sandbox.exec({
      command,
      cwd: ctx.workspace,
      timeoutMs: o.timeoutMs,
      signal: ctx.signal,
      maxOutputBytes: o.maxBytes,
      capture: 'split',
    });
  } catch (err) {
    throw new ToolError(`Could not run ${o.label}: ${errorMessage(err)}`);
  }
  for (const notice of r.notices ?? []) ctx.progress(notice);
  if (r.aborted || ctx.signal.aborted) throw new ToolError('Cancelled.');
  if (r.timedOut) throw new ToolError(`${o.label} timed out after ${seconds(o.timeoutMs)}s and was stopped.`);
  const { stdout, stderr, stdoutCut } = r.split ?? { stdout: r.output, stderr: '', stdoutCut: false };
  const notices = r.notices === undefined ? {} : { notices: r.notices };
  if (stdoutCut) return { exitCode: 0, stdout, stderr, truncated: true, ...notices };
  if (r.exitCode === 127 && /not found|No such file/i.test(stderr)) {
    throw new ToolError(
      `Could not run ${o.binary}: git is not installed or not on PATH. Install git to use the git tools.`,
    );
  }
  if (r.exitCode === null) throw new ToolError(`${o.label} was killed by ${r.signal ?? 'a signal'}.`);
  return { exitCode: r.exitCode, stdout, stderr, truncated: false, ...notices };
}

function notRepoMessage(workspace: string): string {
  return `Not a git repository: ${workspace}. Run \`git init\` with the shell tool if you want one.`;
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
