import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { displayPath, errorCode, errorMessage, resolveInWorkspace } from '../path-guard.js';
import { formatCount, splitLines } from '../truncate.js';
import { defineTool, ToolError } from '../types.js';

export const writeFileTool = defineTool({
  name: 'write_file',
  description: 'Create or overwrite a file with the complete content given; parent directories are created.',
  parameters: z.object({ path: z.string(), content: z.string() }),
  mutates: true,
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
      await writeAtomically(abs, args.content, existing?.mode);
    } catch (err) {
      throw new ToolError(`Cannot write ${shown}: ${errorMessage(err)}`);
    }

    const bytes = Buffer.byteLength(args.content, 'utf8');
    const lines = splitLines(args.content).length;
    const verb = existing ? 'Overwrote' : 'Created';
    return {
      output: `${verb} ${shown}: wrote ${formatCount(lines)} line${lines === 1 ? '' : 's'} (${formatCount(bytes)} bytes).`,
      meta: { path: shown, created: !existing, lines, bytes },
    };
  },
});

/**
 * Writes to a sibling temp file and renames it over the target, so a reader (or a crash) never sees
 * a half-written file. The temp file lives in the same directory because rename is only atomic
 * within one filesystem. An existing file keeps its permission bits (executable scripts stay so);
 * the name is shortened so a long target name cannot push it past NAME_MAX.
 */
async function writeAtomically(target: string, content: string, mode: number | undefined): Promise<void> {
  const tmp = path.join(
    path.dirname(target),
    `.${path.basename(target).slice(0, 100)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  let renamed = false;
  try {
    const handle = await open(tmp, 'wx');
    try {
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (mode !== undefined) await chmod(tmp, mode & 0o7777);
    await rename(tmp, target);
    renamed = true;
  } finally {
    if (!renamed) await unlink(tmp).catch(() => undefined);
  }
}
