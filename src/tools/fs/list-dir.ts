import type { Dirent } from 'node:fs';
import { lstat, readdir, readlink, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { displayPath, errorCode, errorMessage, resolveInWorkspace } from '../path-guard.js';
import { formatBytes, formatCount } from '../truncate.js';
import { defineTool, ToolError } from '../types.js';

export const LIST_MAX_ENTRIES = 500;

/** Shown, but never descended into: their contents drown everything else and are rarely wanted. */
const OPAQUE_DIRS = new Set(['.git', 'node_modules']);

export const listDirTool = defineTool({
  name: 'list_dir',
  description: 'List a directory (default ".").',
  parameters: z.object({
    path: z.string().optional(),
    depth: z.number().int().min(1).max(3).optional(),
  }),
  mutates: false,
  touches: (args) => ({ reads: [args.path ?? '.'] }),
  async run(args, ctx) {
    const abs = await resolveInWorkspace(ctx.workspace, args.path ?? '.');
    const shown = displayPath(ctx.workspace, abs);
    const info = await stat(abs).catch((err: unknown) => {
      if (errorCode(err) === 'ENOENT' || errorCode(err) === 'ENOTDIR') return undefined;
      throw new ToolError(`Cannot list ${shown}: ${errorMessage(err)}`);
    });
    if (!info) throw new ToolError(`Directory not found: ${shown}`);
    if (!info.isDirectory()) {
      throw new ToolError(`${shown} is a file, not a directory. Use read_file to read it.`);
    }

    const depth = args.depth ?? 1;
    const root: Node = { name: shown, abs, kind: 'dir', children: [] };
    const { shownCount, omitted } = await walk(root, depth, ctx.signal);
    if (root.note) throw new ToolError(`Cannot list ${shown}: ${root.note}`);
    if (shownCount === 0 && omitted === 0) {
      return { output: `${shown} is empty.`, meta: { path: shown, entries: 0 } };
    }

    const lines: string[] = [];
    render(root.children ?? [], 0, lines);
    if (omitted > 0) {
      lines.push(
        `[${formatCount(shownCount)} entries shown; ${formatCount(omitted)} more not shown. ` +
          'List a subdirectory or use a smaller depth.]',
      );
    }
    return {
      output: lines.join('\n'),
      meta: { path: shown, entries: shownCount, omitted },
    };
  },
});

interface Node {
  name: string;
  abs: string;
  kind: 'dir' | 'file' | 'symlink' | 'other';
  size?: number;
  linkTarget?: string;
  /** Set once the directory has been read; absent means it was not descended into. */
  children?: Node[];
  /** Why the directory was not read, when that is worth saying. */
  note?: string;
}

/**
 * Reads level by level, so that when the cap bites the shallow entries (the ones that give the shape
 * of the tree) are the ones kept.
 */
async function walk(
  root: Node,
  maxDepth: number,
  signal: AbortSignal,
): Promise<{ shownCount: number; omitted: number }> {
  let shownCount = 0;
  let omitted = 0;
  let level: Node[] = [root];
  for (let d = 1; d <= maxDepth && level.length > 0; d++) {
    const next: Node[] = [];
    for (const dir of level) {
      signal.throwIfAborted();
      let entries: Dirent[];
      try {
        entries = await readdir(dir.abs, { withFileTypes: true });
      } catch (err) {
        dir.note = `unreadable: ${errorCode(err) ?? errorMessage(err)}`;
        continue;
      }
      const room = Math.max(0, LIST_MAX_ENTRIES - shownCount);
      const sorted = sortEntries(entries);
      const kept = sorted.slice(0, room);
      omitted += sorted.length - kept.length;
      dir.children = await Promise.all(kept.map((e) => describe(dir.abs, e)));
      shownCount += kept.length;
      for (const child of dir.children) {
        if (child.kind === 'dir' && !OPAQUE_DIRS.has(child.name)) next.push(child);
        else if (child.kind === 'dir') child.note = 'contents not listed';
      }
    }
    // Once something was left out, a deeper level would only be cut off too.
    if (omitted > 0) break;
    level = next;
  }
  return { shownCount, omitted };
}

function sortEntries(entries: Dirent[]): Dirent[] {
  const rank = (e: Dirent) => (e.isDirectory() ? 0 : 1);
  return [...entries].sort((a, b) => rank(a) - rank(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

async function describe(dir: string, entry: Dirent): Promise<Node> {
  const abs = path.join(dir, entry.name);
  if (entry.isDirectory()) return { name: entry.name, abs, kind: 'dir' };
  if (entry.isSymbolicLink()) {
    // Links are shown but never followed: their target may be outside the workspace or loop back.
    const target = await readlink(abs).catch(() => '?');
    return { name: entry.name, abs, kind: 'symlink', linkTarget: target };
  }
  if (entry.isFile()) {
    const size = await lstat(abs).then(
      (s) => s.size,
      () => undefined,
    );
    return { name: entry.name, abs, kind: 'file', size };
  }
  return { name: entry.name, abs, kind: 'other' };
}

function render(nodes: Node[], indent: number, out: string[]): void {
  const pad = '  '.repeat(indent);
  for (const node of nodes) {
    if (node.kind === 'dir') {
      out.push(`${pad}${node.name}/${node.note ? ` (${node.note})` : ''}`);
      if (node.children) render(node.children, indent + 1, out);
    } else if (node.kind === 'symlink') {
      out.push(`${pad}${node.name} -> ${node.linkTarget}`);
    } else if (node.kind === 'file') {
      out.push(`${pad}${node.name}${node.size === undefined ? '' : ` (${formatBytes(node.size)})`}`);
    } else {
      out.push(`${pad}${node.name} (special file)`);
    }
  }
}
