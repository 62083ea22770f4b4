import { stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { displayPath, resolveInWorkspace } from '../path-guard.js';
import { formatBytes } from '../truncate.js';
import { defineTool, ToolError } from '../types.js';
import { scanFiles } from './grep-fallback.js';
import { GrepCollector, type GrepLimits, multilinePatternError, type SearchEnd } from './grep-output.js';
import { type RipgrepSearch, searchWithRipgrep } from './grep-ripgrep.js';
import { type GrepEngine, RipgrepUnavailable, ripgrepFinder } from './ripgrep.js';
import { searchScope } from './scope.js';
import { compileGlob, globFileName, type WalkedFile, walkFiles } from './walk.js';

export type { GrepEngine };

const GREP_MAX_MATCHES = 100;
const GREP_MAX_CHARS = 12_000;
const GREP_MAX_LINE_CHARS = 300;
const GREP_COUNT_LIMIT = 10_000;
const GREP_TIMEOUT_MS = 30_000;
/** Larger files are not searched, and are named as skipped. */
const GREP_MAX_FILE_BYTES = 16 * 1024 * 1024;
/** Of a longer line only the start is read back (the match window is shown if it lies there). */
const GREP_MAX_LINE_BYTES = 64 * 1024;

export interface GrepToolOptions {
  engine?: GrepEngine;
  /** Where PATH and HEARTH_NO_RIPGREP are read; defaults to this process's environment. */
  env?: NodeJS.ProcessEnv;
  maxMatches?: number;
  maxChars?: number;
  maxLineChars?: number;
  countLimit?: number;
  timeoutMs?: number;
  maxFileBytes?: number;
  maxLineBytes?: number;
  /** Files and directories never searched (gitignore patterns, workspace-relative); see scope.ts. */
  exclude?: readonly string[];
}

/**
 * Builds the grep tool. Both engines print identical results for the same files (unless the
 * count limit stops the search: ripgrep's threads decide which files it had searched by then),
 * so a benchmark can build one of each (`engine: 'ripgrep'` and `engine: 'scan'`) and compare.
 */
export function createGrepTool(options: GrepToolOptions = {}) {
  const ripgrepPath = ripgrepFinder(options);

  return defineTool({
    name: 'grep',
    description: 'Regex search in files; prints path:line:text.',
    parameters: z.object({
      pattern: z.string().min(1),
      path: z.string().optional(),
      glob: z.string().optional(),
      ignore_case: z.boolean().optional(),
      context: z.number().int().min(0).max(10).optional(),
    }),
    mutates: false,
    touches: (args) => ({ reads: [args.path ?? '.'], filters: args.glob === undefined ? [] : [args.glob] }),
    async run(args, ctx) {
      const multiline = multilinePatternError(args.pattern);
      if (multiline) throw new ToolError(multiline);
      const target = await resolveInWorkspace(ctx.workspace, args.path ?? '.', { mustExist: true });
      const shown = displayPath(ctx.workspace, target);
      const info = await stat(target);
      if (!info.isDirectory() && !info.isFile()) {
        throw new ToolError(`${shown} is not a regular file or directory.`);
      }
      const limits: GrepLimits = {
        maxMatches: options.maxMatches ?? GREP_MAX_MATCHES,
        maxChars: options.maxChars ?? GREP_MAX_CHARS,
        maxLineChars: options.maxLineChars ?? GREP_MAX_LINE_CHARS,
        countLimit: options.countLimit ?? GREP_COUNT_LIMIT,
        context: args.context ?? 0,
        maxFileBytes: options.maxFileBytes ?? GREP_MAX_FILE_BYTES,
        maxLineBytes: options.maxLineBytes ?? GREP_MAX_LINE_BYTES,
      };
      if (info.isFile() && info.size > limits.maxFileBytes) {
        return {
          output:
            `Not searched: ${shown} is ${formatBytes(info.size)}, over the ${formatBytes(limits.maxFileBytes)} ` +
            "grep reads. The shell's grep can search it.",
          meta: { matches: 0, files: 0, skipped: 1 },
        };
      }

      // A file named by path is searched whatever the ignore rules and glob say, as rg does.
      const scope = info.isDirectory()
        ? await searchScope(ctx.workspace, target, options.exclude)
        : undefined;
      const filter = args.glob ? compileGlob(args.glob) : undefined;
      const rgTarget: RipgrepSearch['target'] = scope
        ? { scope, fileName: args.glob ? globFileName(args.glob) : undefined, filter }
        : { file: shown };
      const files = scope
        ? () => walkFiles({ scope, signal: ctx.signal, filter })
        : () => single({ abs: target, path: shown, rel: path.basename(target) });

      const search = { pattern: args.pattern, ignoreCase: args.ignore_case ?? false, limits };
      const deadline = Date.now() + (options.timeoutMs ?? GREP_TIMEOUT_MS);
      const rgPath = ripgrepPath();
      // A file named by path went through the permission check itself; a sweep leaves secrets out.
      const leavesOut = scope ? ctx.leavesOut : undefined;
      let collector = new GrepCollector(limits, leavesOut);
      let end: SearchEnd | undefined;
      let engine: 'ripgrep' | 'scan' = 'scan';
      if (rgPath) {
        try {
          end = await searchWithRipgrep({
            ...search,
            rgPath,
            workspace: ctx.workspace,
            target: rgTarget,
            collector,
            signal: ctx.signal,
            deadline,
          });
          engine = 'ripgrep';
        } catch (err) {
          if (!(err instanceof RipgrepUnavailable) || options.engine === 'ripgrep') throw err;
          collector = new GrepCollector(limits, leavesOut);
        }
      }
      end ??= await scanFiles(files(), { ...search, collector, signal: ctx.signal, deadline });

      const timedOut = end === 'timeout';
      const meta = {
        engine,
        matches: collector.totalMatches,
        files: collector.filesWithMatches,
        timedOut,
      };
      if (collector.totalMatches === 0) {
        const place = shown === '.' ? 'the workspace' : shown;
        const where = args.glob ? `${place} (files matching ${JSON.stringify(args.glob)})` : place;
        const note = timedOut ? ' before the search timed out; narrow the path or glob' : '';
        const skipped = collector.skippedNote();
        const output = `No matches for ${JSON.stringify(args.pattern)} in ${where}${note}.`;
        return { output: skipped ? `${output}\n${skipped}` : output, meta };
      }
      return { output: collector.render(timedOut ? 'timeout' : undefined), meta };
    },
  });
}

export const grepTool = createGrepTool();

async function* single(file: WalkedFile): AsyncGenerator<WalkedFile[]> {
  yield [file];
}
