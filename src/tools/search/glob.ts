import { stat } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { displayPath, isInside, resolveInWorkspace } from '../path-guard.js';
import { formatCount } from '../truncate.js';
import { defineTool, ToolError } from '../types.js';
import { secretsNote } from './grep-output.js';
import { type Dated, Mtimes } from './mtimes.js';
import {
  fromRipgrepPath,
  type GrepEngine,
  RipgrepUnavailable,
  ripgrepFinder,
  rootArg,
  runRipgrep,
  scopeArgs,
} from './ripgrep.js';
import { type SearchScope, searchScope, toSlashes } from './scope.js';
import { compileGlob, globFileName, stripLeadingDotSlash, walkFiles } from './walk.js';

const GLOB_MAX_RESULTS = 200;

export interface GlobToolOptions {
  /** Paths listed at most (default 200). */
  maxResults?: number;
  /** Who walks the tree: ripgrep (`rg --files`) or the built-in walker; as for grep. */
  engine?: GrepEngine;
  /** Where PATH and HEARTH_NO_RIPGREP are read; defaults to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Files and directories never listed (gitignore patterns, workspace-relative); see scope.ts. */
  exclude?: readonly string[];
}

const IGNORED_NOTE = 'files ignored by .gitignore, and .git/ and node_modules/, are skipped';

/** Builds the glob tool; options exist for tests and benchmarks. */
export function createGlobTool(options: GlobToolOptions = {}) {
  const maxResults = options.maxResults ?? GLOB_MAX_RESULTS;
  const ripgrepPath = ripgrepFinder(options);
  return defineTool({
    name: 'glob',
    description: 'Find files by glob ("**/*.ts"), newest first.',
    parameters: z.object({
      pattern: z.string().min(1),
      path: z.string().optional(),
    }),
    mutates: false,
    touches: (args) => ({ reads: [args.path ?? '.'] }),
    async run(args, ctx) {
      const searchRoot = await resolveInWorkspace(ctx.workspace, args.path ?? '.', { mustExist: true });
      const shownRoot = displayPath(ctx.workspace, searchRoot);
      const info = await stat(searchRoot);
      if (!info.isDirectory()) {
        throw new ToolError(`${shownRoot} is a file, not a directory. Give the directory to search in path.`);
      }

      const pattern = normalizePattern(args.pattern, ctx.workspace, searchRoot);
      const found = await findFiles(
        pattern,
        searchRoot,
        ctx.workspace,
        options.exclude,
        ripgrepPath(),
        ctx.signal,
      );
      const secret = found?.filter((f) => ctx.leavesOut?.(f.path)).map((f) => f.path) ?? [];
      const visible = found?.filter((f) => !secret.includes(f.path));
      const secretNote = secretsNote(secret, 'glob');
      if (visible === undefined || visible.length === 0) {
        const hint = (await namesDirectory(pattern, searchRoot))
          ? ` ${pattern} is a directory: use "${pattern.replace(/\/+$/, '')}/**" for the files in it.`
          : '';
        const none = `No files match ${JSON.stringify(args.pattern)} in ${shownRoot} (${IGNORED_NOTE}).${hint}`;
        return { output: secretNote ? `${none}\n${secretNote}` : none, meta: { matches: 0 } };
      }
      const dated = visible;
      dated.sort((a, b) => b.mtime - a.mtime || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      const lines = dated.slice(0, maxResults).map((f) => f.path);
      const shown = lines.length;
      const left = dated.length - shown;
      if (left > 0) {
        lines.push(
          `[${formatCount(shown)} of ${formatCount(dated.length)} files shown, newest first; ` +
            `${formatCount(left)} more left out. Narrow the pattern or path.]`,
        );
      }
      if (secretNote) lines.push(secretNote);
      return {
        output: lines.join('\n'),
        meta: { matches: dated.length, shown, truncated: left > 0 },
      };
    },
  });
}

export const globTool = createGlobTool();

/**
 * A pattern relative to the searched directory, with `/` separators. An absolute pattern inside
 * the workspace is accepted (models often echo absolute paths back); one outside it is refused.
 */
function normalizePattern(raw: string, workspace: string, searchRoot: string): string {
  let pattern = raw.trim();
  if (path.isAbsolute(pattern)) {
    const scan = picomatch.scan(pattern);
    const literal = path.resolve(scan.isGlob ? scan.base || '/' : pattern);
    if (!isInside(searchRoot, literal)) {
      throw new ToolError(
        `Pattern ${JSON.stringify(raw)} is an absolute path outside ${displayPath(workspace, searchRoot)}. ` +
          'Give a pattern relative to path, such as "**/*.ts".',
      );
    }
    const parts = [toSlashes(path.relative(searchRoot, literal)), scan.isGlob ? scan.glob : ''];
    pattern = parts.filter((p) => p !== '').join('/');
  }
  return stripLeadingDotSlash(pattern);
}

/**
 * The matching files with their modification times, or undefined when none match. It walks only
 * below the pattern's literal leading directories (`src/tools` for `src/tools/**\/*.ts`), which is
 * faster and lets a pattern that names an ignored or skipped directory, such as `node_modules/zod/**`,
 * look inside it.
 */
async function findFiles(
  pattern: string,
  searchRoot: string,
  workspace: string,
  exclude: readonly string[] | undefined,
  rgPath: string | undefined,
  signal: AbortSignal,
): Promise<Dated[] | undefined> {
  const scan = picomatch.scan(pattern);
  let base = scan.isGlob ? scan.base : path.posix.dirname(pattern);
  if (base === '.') base = '';
  let walkRoot = searchRoot;
  if (base !== '') {
    walkRoot = await resolveInWorkspace(workspace, path.join(searchRoot, base));
    const info = await stat(walkRoot).catch(() => undefined);
    if (!info?.isDirectory()) return undefined;
  }
  const scope = await searchScope(workspace, walkRoot, exclude);
  const matches = compileGlob(pattern);
  const prefix = base === '' ? '' : `${base}/`;
  const filter = (rel: string) => matches(prefix + rel);
  if (rgPath) {
    try {
      return await listWithRipgrep(rgPath, scope, globFileName(pattern), filter, signal);
    } catch (err) {
      if (!(err instanceof RipgrepUnavailable)) throw err;
    }
  }
  const mtimes = new Mtimes(workspace, signal);
  for await (const batch of walkFiles({ scope, signal, filter })) {
    for (const file of batch) mtimes.add(file.path);
  }
  return mtimes.all();
}

/** `rg --files` over the scope, the files it lists stat'ed as they come. */
async function listWithRipgrep(
  rgPath: string,
  scope: SearchScope,
  fileName: string | undefined,
  filter: (rel: string) => boolean,
  signal: AbortSignal,
): Promise<Dated[] | undefined> {
  const mtimes = new Mtimes(scope.workspace, signal);
  const rootPrefix = scope.rootPath === '' ? '' : `${scope.rootPath}/`;
  let pending: Buffer = Buffer.alloc(0);
  const take = (name: Buffer) => {
    const file = fromRipgrepPath(name.toString('utf8'));
    if (filter(file.slice(rootPrefix.length))) mtimes.add(file);
  };
  const run = runRipgrep({
    rgPath,
    args: [...scopeArgs(scope, fileName), '--files', '--null', '--no-messages', '--', rootArg(scope)],
    cwd: scope.workspace,
    signal,
    onStdout: (chunk) => {
      const bytes = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      let start = 0;
      for (let nul = bytes.indexOf(0); nul !== -1; nul = bytes.indexOf(0, start)) {
        take(bytes.subarray(start, nul));
        start = nul + 1;
      }
      pending = bytes.subarray(start);
    },
  });
  const exit = await run.exit;
  // Exit 2 alone means some directory could not be read, which the walker skips silently too;
  // with an error message, rg did not understand its flags.
  if (exit.code !== 0 && exit.code !== 1 && (exit.code !== 2 || exit.stderr !== '')) {
    throw new RipgrepUnavailable(`ripgrep failed: ${exit.stderr || `exit code ${exit.code}`}`);
  }
  return mtimes.all();
}

/** A pattern without wildcards that names a directory: the model most likely wants what is inside. */
async function namesDirectory(pattern: string, searchRoot: string): Promise<boolean> {
  if (pattern === '' || picomatch.scan(pattern).isGlob) return false;
  const info = await stat(path.join(searchRoot, pattern)).catch(() => undefined);
  return info?.isDirectory() ?? false;
}
