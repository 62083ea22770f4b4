import { stat as statFile } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { displayPath, errorCode, errorMessage, isInside, resolveInWorkspace } from '../path-guard.js';
import { formatCount } from '../truncate.js';
import { defineTool, type ToolContext, ToolError } from '../types.js';
import { compileGlob, stripLeadingDotSlash, toSlashes, type WalkedFile, walkFiles } from './walk.js';

export const GLOB_MAX_RESULTS = 200;

const STAT_CONCURRENCY = 64;

interface Dated {
  path: string;
  mtime: number;
}

export interface GlobToolOptions {
  /** Paths listed at most (default 200). */
  maxResults?: number;
}

const IGNORED_NOTE = 'files ignored by .gitignore, and .git/ and node_modules/, are skipped';

/** Builds the glob tool; options exist for tests and benchmarks. */
export function createGlobTool(options: GlobToolOptions = {}) {
  const maxResults = options.maxResults ?? GLOB_MAX_RESULTS;
  return defineTool({
    name: 'glob',
    description:
      'Find files by glob, newest first ("**/*.ts"; "*.md" matches at any depth). Skips ignored files.',
    parameters: z.object({
      pattern: z.string().min(1),
      path: z.string().optional().describe('Directory (default ".")'),
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
      const { walked, dated } = await withMtimes(await findFiles(pattern, searchRoot, ctx), ctx.signal);
      if (walked === 0) {
        const hint = (await namesDirectory(pattern, searchRoot))
          ? ` ${pattern} is a directory: use "${pattern.replace(/\/+$/, '')}/**" for the files in it.`
          : '';
        return {
          output: `No files match ${JSON.stringify(args.pattern)} in ${shownRoot} (${IGNORED_NOTE}).${hint}`,
          meta: { matches: 0 },
        };
      }

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
 * Walks only below the pattern's literal leading directories (`src/tools` for
 * `src/tools/**\/*.ts`), which is faster and lets a pattern that names an ignored or skipped
 * directory, such as `node_modules/zod/**`, look inside it.
 */
async function findFiles(
  pattern: string,
  searchRoot: string,
  ctx: ToolContext,
): Promise<AsyncIterable<WalkedFile[]> | Iterable<WalkedFile[]>> {
  const scan = picomatch.scan(pattern);
  let base = scan.isGlob ? scan.base : path.posix.dirname(pattern);
  if (base === '.') base = '';
  let walkRoot = searchRoot;
  if (base !== '') {
    walkRoot = await resolveInWorkspace(ctx.workspace, path.join(searchRoot, base));
    const info = await stat(walkRoot).catch(() => undefined);
    if (!info?.isDirectory()) return [];
  }
  const matches = compileGlob(pattern);
  const prefix = base === '' ? '' : `${base}/`;
  return walkFiles({
    workspace: ctx.workspace,
    root: walkRoot,
    signal: ctx.signal,
    filter: (rel) => matches(prefix + rel),
  });
}

/** A pattern without wildcards that names a directory: the model most likely wants what is inside. */
async function namesDirectory(pattern: string, searchRoot: string): Promise<boolean> {
  if (pattern === '' || picomatch.scan(pattern).isGlob) return false;
  const info = await stat(path.join(searchRoot, pattern)).catch(() => undefined);
  return info?.isDirectory() ?? false;
}

/**
 * The walked files with their modification times, and how many the walk found. Files are
 * stat'ed while the walk goes on, STAT_CONCURRENCY at a time, rather than after it.
 */
async function withMtimes(
  files: AsyncIterable<WalkedFile[]> | Iterable<WalkedFile[]>,
  signal: AbortSignal,
): Promise<{ walked: number; dated: Dated[] }> {
  const dated: (Dated | undefined)[] = [];
  let running = 0;
  let failure: ToolError | undefined;
  let freed: (() => void) | undefined;
  const slot = () =>
    new Promise<void>((resolve) => {
      freed = resolve;
    });
  for await (const batch of files) {
    for (const file of batch) {
      while (running >= STAT_CONCURRENCY) await slot();
      if (failure) throw failure;
      signal.throwIfAborted();
      const index = dated.length;
      dated.push(undefined);
      running += 1;
      statFile(file.abs, (err, info) => {
        running -= 1;
        if (!err) dated[index] = { path: file.path, mtime: info.mtimeMs };
        // Deleted since the walk saw it: left out.
        else if (errorCode(err) !== 'ENOENT')
          failure ??= new ToolError(`Cannot read ${file.path}: ${errorMessage(err)}`);
        const wake = freed;
        freed = undefined;
        wake?.();
      });
    }
  }
  while (running > 0) await slot();
  if (failure) throw failure;
  return { walked: dated.length, dated: dated.filter((d) => d !== undefined) };
}
