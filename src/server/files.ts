import { open, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { isSecretPath } from '../permissions/secrets.js';
import { type IgnoreFile, isIgnored, parseIgnoreFile } from '../tools/search/gitignore.js';
import { GatewayError } from './problem.js';

/**
 * A read-only view of a session's workspace for people (the web UI's file tree): one folder at a
 * time, without what .gitignore leaves out, and a file's text. Nothing leads out of the workspace
 * (paths are judged after symlinks are resolved) and secret files (.env, keys) are not shown.
 */
export interface FolderEntry {
  name: string;
  kind: 'dir' | 'file';
  size?: number;
}

const MAX_ENTRIES = 1000;
const MAX_SHOWN_BYTES = 256 * 1024;

/** The real absolute path of `rel` inside `workspace`, or a 400/403/404 saying why not. */
async function inside(workspace: string, rel: string): Promise<{ abs: string; rel: string }> {
  if (isAbsolute(rel) || rel.split(/[\\/]/).includes('..')) {
    throw new GatewayError(400, `Give a path inside the workspace, relative to it: ${rel}`);
  }
  const root = await realpath(workspace);
  let abs: string;
  try {
    abs = await realpath(join(root, rel));
  } catch {
    throw new GatewayError(404, `No such file or folder in the workspace: ${rel}`);
  }
  const within = relative(root, abs);
  if (within.startsWith('..') || isAbsolute(within)) {
    throw new GatewayError(403, `${rel} leads out of the workspace.`);
  }
  return { abs, rel: within.split(sep).join('/') };
}

async function text(path: string): Promise<string> {
  return readFile(path, 'utf8').catch(() => '');
}

/** The ignore files that apply inside `dir` (workspace-relative): every .gitignore from the root down. */
async function ignoreLayers(
  root: string,
  dir: string,
): Promise<{ gitignores: IgnoreFile[]; excludes: IgnoreFile[] }> {
  const parts = dir === '' ? [] : dir.split('/');
  const gitignores: IgnoreFile[] = [];
  for (let depth = 0; depth <= parts.length; depth++) {
    const prefix = parts.slice(0, depth).join('/');
    const rules = parseIgnoreFile(await text(join(root, prefix, '.gitignore')));
    if (rules.length > 0) gitignores.push({ prefix: prefix ? `${prefix}/` : '', rules });
  }
  const exclude = parseIgnoreFile(await text(join(root, '.git', 'info', 'exclude')));
  return { gitignores, excludes: exclude.length > 0 ? [{ prefix: '', rules: exclude }] : [] };
}

export async function listFolder(
  workspace: string,
  path: string,
): Promise<{ path: string; entries: FolderEntry[]; more: boolean }> {
  const root = await realpath(workspace);
  const { abs, rel } = await inside(workspace, path);
  const layers = await ignoreLayers(root, rel);
  let dirents: import('node:fs').Dirent[];
  try {
    dirents = await readdir(abs, { withFileTypes: true });
  } catch {
    throw new GatewayError(400, `${path || '.'} is not a folder.`);
  }
  const entries: FolderEntry[] = [];
  for (const d of dirents) {
    const isDir = d.isDirectory();
    if (!isDir && !d.isFile()) continue;
    if (d.name === '.git' && isDir) continue;
    const entryPath = rel ? `${rel}/${d.name}` : d.name;
    if (isIgnored(layers.gitignores, layers.excludes, entryPath, d.name, isDir)) continue;
    if (!isDir && isSecretPath(entryPath)) continue;
    entries.push({ name: d.name, kind: isDir ? 'dir' : 'file' });
  }
  entries.sort((a, b) => (a.kind === b.kind ? a.name.localeCompare(b.name) : a.kind === 'dir' ? -1 : 1));
  const shown = entries.slice(0, MAX_ENTRIES);
  await Promise.all(
    shown.map(async (entry) => {
      if (entry.kind === 'file')
        entry.size = (await stat(join(abs, entry.name)).catch(() => undefined))?.size;
    }),
  );
  return { path: rel, entries: shown, more: entries.length > shown.length };
}

export async function readWorkspaceFile(
  workspace: string,
  path: string,
): Promise<{ path: string; content: string; size: number; truncated: boolean }> {
  const { abs, rel } = await inside(workspace, path);
  if (isSecretPath(rel)) throw new GatewayError(403, `${rel} may hold secrets; it is not shown here.`);
  const info = await stat(abs);
  if (!info.isFile()) throw new GatewayError(400, `${rel} is not a file.`);
  const handle = await open(abs, 'r');
  try {
    const buffer = Buffer.alloc(Math.min(info.size, MAX_SHOWN_BYTES));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const head = buffer.subarray(0, bytesRead);
    if (head.subarray(0, 8192).includes(0)) {
      throw new GatewayError(415, `${rel} is a binary file (${info.size} bytes); only text is shown.`);
    }
    return { path: rel, content: head.toString('utf8'), size: info.size, truncated: info.size > bytesRead };
  } finally {
    await handle.close();
  }
}
