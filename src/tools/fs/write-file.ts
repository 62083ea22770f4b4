import { mkdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { unifiedDiff } from '../edit/diff.js';
import { toLf } from '../edit/file-text.js';
import { previewChange } from '../edit/preview.js';
import { displayPath, errorCode, errorMessage, resolveInWorkspace } from '../path-guard.js';
import { formatCount, splitLines } from '../truncate.js';
import { defineTool, ToolError } from '../types.js';
import { writeFileAtomic } from './atomic-write.js';

const DIFF_MAX_BYTES = 1_000_000;

export const writeFileTool = defineTool({
  name: 'write_file',
  description: 'Create or overwrite a file.',
  parameters: z.object({ path: z.string(), content: z.string() }),
  mutates: true,
  touches: (args) => ({ writes: [args.path] }),
  preview: (args, ctx) => previewChange(ctx.workspace, args.path, { content: args.content }),
  async run(args, ctx) {
    const abs = await resolveInWorkspace(ctx.workspace, args.path, { forWriting: true });
    const shown = displayPath(ctx.workspace, abs);

    const existing = await stat(abs).catch((err: unknown) => {
      // ENOTDIR (a parent is a file) is reported more helpfully by mkdir below.
      if (errorCode(err) === 'ENOENT' || errorCode(err) === 'ENOTDIR') return undefined;
      throw new ToolError(`Cannot write ${shown}: ${errorMessage(err)}`);
    });
    if (existing?.isDirectory()) {
      throw new ToolError(`${shown} is a directory; write_file needs a file path.`);
    }
    if (existing && !existing.isFile()) {
      throw new ToolError(`${shown} is not a regular file (it may be a pipe, socket or device).`);
    }

    // For the person watching: what the write changed. Files too large to diff cheaply are not shown.
    const before =
      existing && existing.size <= DIFF_MAX_BYTES
        ? await readFile(abs, 'utf8').then(toLf, () => undefined)
        : undefined;

    const dir = path.dirname(abs);
    try {
      await mkdir(dir, { recursive: true });
    } catch (err) {
      const code = errorCode(err);
      if (code === 'EEXIST' || code === 'ENOTDIR') {
        throw new ToolError(
          `Cannot create the parent directories of ${shown}: part of that path is an existing file.`,
        );
      }
      throw new ToolError(`Cannot create ${displayPath(ctx.workspace, dir)}: ${errorMessage(err)}`);
    }

    try {
      await writeFileAtomic(abs, args.content, existing?.mode);
    } catch (err) {
      throw new ToolError(`Cannot write ${shown}: ${errorMessage(err)}`);
    }

    const bytes = Buffer.byteLength(args.content, 'utf8');
    const lines = splitLines(args.content).length;
    const verb = existing ? 'Overwrote' : 'Created';
    return {
      output: `${verb} ${shown}: wrote ${formatCount(lines)} line${lines === 1 ? '' : 's'} (${formatCount(bytes)} bytes).`,
      display:
        existing && before === undefined
          ? undefined
          : unifiedDiff(shown, before, toLf(args.content)) || undefined,
      meta: { path: shown, created: !existing, lines, bytes },
    };
  },
});
