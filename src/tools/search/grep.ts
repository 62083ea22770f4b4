import { stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { displayPath, resolveInWorkspace } from '../path-guard.js';
import { defineTool, ToolError } from '../types.js';
import { compileScanRegex, type SearchEnd, scanFiles } from './grep-fallback.js';
import { GrepCollector, type GrepLimits, multilinePatternError } from './grep-output.js';
import { findRipgrep, RipgrepUnavailable, searchWithRipgrep } from './ripgrep.js';
import { compileGlob, type WalkedFile, walkFiles } from './walk.js';

export const GREP_MAX_MATCHES = 100;
export const GREP_MAX_CHARS = 12_000;
export const GREP_MAX_LINE_CHARS = 300;
export const GREP_COUNT_LIMIT = 10_000;
export const GREP_TIMEOUT_MS = 30_000;

/**
 * `auto` uses ripgrep when it is on PATH and HEARTH_NO_RIPGREP is not `1`, else the TypeScript
 * scan; `ripgrep` insists on rg (an error without it); `scan` never uses it.
 */
export type GrepEngine = 'auto' | 'ripgrep' | 'scan';

export interface GrepToolOptions {
  engine?: GrepEngine;
  /** Where PATH and HEARTH_NO_RIPGREP are read; defaults to this process's environment. */
  env?: NodeJS.ProcessEnv;
  maxMatches?: number;
  maxChars?: number;
  maxLineChars?: number;
  countLimit?: number;
  timeoutMs?: number;
}

/**
 * Builds the grep tool. Both engines print identical results for the same files, so a benchmark
 * can build one of each (`engine: 'ripgrep'` and `engine: 'scan'`) and compare.
 */
export function createGrepTool(options: GrepToolOptions = {}) {
  // PATH is searched once per tool; the opt-out variable is read on every call so it can be flipped.
  let rgFound: { path: string | undefined } | undefined;
  const ripgrepPath = (): string | undefined => {
    const env = options.env ?? process.env;
    const engine = options.engine ?? 'auto';
    if (engine === 'scan' || (engine === 'auto' && env.HEARTH_NO_RIPGREP === '1')) return undefined;
    rgFound ??= { path: findRipgrep(env.PATH ?? '') };
    if (!rgFound.path && engine === 'ripgrep') {
      throw new Error('ripgrep (rg) was required for grep but is not on PATH.');
    }
    return rgFound.path;
  };

  return defineTool({
    name: 'grep',
    description: 'Search file contents by regex; prints path:line:text. Skips ignored and binary files.',
    parameters: z.object({
      pattern: z.string().min(1).describe('Regex; escape ( ) [ ] { } . * + ? | to match them literally'),
      path: z.string().optional().describe('File or directory'),
      glob: z.string().optional().describe('File filter, e.g. "*.ts"'),
      ignore_case: z.boolean().optional(),
      context: z.number().int().min(0).max(10).optional().describe('Lines around each match'),
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

      // A file named by path is searched whatever the ignore rules and glob say, as rg does.
      const filter = args.glob ? compileGlob(args.glob) : undefined;
      const files = info.isDirectory()
        ? () => walkFiles({ workspace: ctx.workspace, root: target, signal: ctx.signal, filter })
        : () => single({ abs: target, path: shown, rel: path.basename(target) });

      const limits: GrepLimits = {
        maxMatches: options.maxMatches ?? GREP_MAX_MATCHES,
        maxChars: options.maxChars ?? GREP_MAX_CHARS,
        maxLineChars: options.maxLineChars ?? GREP_MAX_LINE_CHARS,
        countLimit: options.countLimit ?? GREP_COUNT_LIMIT,
        context: args.context ?? 0,
      };
      const ignoreCase = args.ignore_case ?? false;
      const deadline = Date.now() + (options.timeoutMs ?? GREP_TIMEOUT_MS);
      const rgPath = ripgrepPath();

      let collector = new GrepCollector(limits);
      let end: SearchEnd | undefined;
      let engine: 'ripgrep' | 'scan' = 'scan';
      if (rgPath) {
        try {
          end = await searchWithRipgrep(files(), {
            rgPath,
            cwd: ctx.workspace,
            pattern: args.pattern,
            ignoreCase,
            context: limits.context,
            collector,
            signal: ctx.signal,
            deadline,
          });
          engine = 'ripgrep';
        } catch (err) {
          if (!(err instanceof RipgrepUnavailable) || options.engine === 'ripgrep') throw err;
          collector = new GrepCollector(limits);
        }
      }
      if (end === undefined) {
        const regex = compileScanRegex(args.pattern, ignoreCase);
        end = await scanFiles(files(), {
          regex,
          context: limits.context,
          collector,
          signal: ctx.signal,
          deadline,
        });
      }

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
        return { output: `No matches for ${JSON.stringify(args.pattern)} in ${where}${note}.`, meta };
      }
      return { output: collector.render(timedOut ? 'timeout' : undefined), meta };
    },
  });
}

export const grepTool = createGrepTool();

async function* single(file: WalkedFile): AsyncGenerator<WalkedFile[]> {
  yield [file];
}
