import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { displayPath, errorCode, errorMessage, resolveInWorkspace } from '../path-guard.js';
import { defineTool, ToolError } from '../types.js';

export const mkdirTool = defineTool({
  name: 'mkdir',
  description: 'Create a directory in the workspace, with any missing parents.',
  parameters: z.object({
    path: z.string().describe('Directory path, relative to the workspace root'),
  }),
  mutates: true,
  touches: (args) => ({ writes: [args.path] }),
  async run(args, ctx) {
    const abs = await resolveInWorkspace(ctx.workspace, args.path, { forWriting: true });
    const shown = displayPath(ctx.workspace, abs);
    let first: string | undefined;
    try {
      // Resolves to the first directory it made, or undefined when the whole path already existed.
      first = await mkdir(abs, { recursive: true });
    } catch (err) {
      const code = errorCode(err);
      if (code === 'EEXIST' || code === 'ENOTDIR') {
        const blocker = await firstNonDirectory(ctx.workspace, abs);
        const where = blocker === undefined ? 'part of that path' : displayPath(ctx.workspace, blocker);
        throw new ToolError(
          `Cannot create ${shown}: ${where} is a file, not a directory. Choose another path or remove the file.`,
        );
      }
      throw new ToolError(`Cannot create ${shown}: ${errorMessage(err)}`);
    }
    const created = first !== undefined;
    return {
      output: created ? `Created ${shown}/` : `Already exists: ${shown}/`,
      meta: { path: shown, created },
    };
  },
});

/** The shallowest existing entry on the way from the workspace to `abs` that is not a directory. */
async function firstNonDirectory(workspace: string, abs: string): Promise<string | undefined> {
  const rel = path.relative(workspace, abs);
  let current = workspace;
  for (const part of rel.split(path.sep).filter((p) => p !== '')) {
    current = path.join(current, part);
    const info = await stat(current).catch(() => undefined);
    if (info === undefined) return undefined;
    if (!info.isDirectory()) return current;
  }
  return undefined;
}
