import type { Dirent } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { type IgnoreFile, isIgnored, parseIgnoreFile } from './gitignore.js';

/**
 * Never entered during a walk, whatever the ignore files say: their contents dwarf the project and
 * are almost never what a search is after. A walk that starts inside one (the caller named it)
 * goes ahead.
 */
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

export interface WalkOptions {
  /** Real path of the workspace; ignore files are read from here down, never above it. */
  workspace: string;
  /** Real path of the directory to walk, inside the workspace. It is walked even if ignored itself. */
  root: string;
  signal: AbortSignal;
  /** Keeps a file when it returns true; receives the path relative to `root`, with `/` separators. */
  filter?: (rel: string) => boolean;
}

export interface WalkedFile {
  abs: string;
  /** Workspace-relative, with `/` separators: what tools print. */
  path: string;
  /** Relative to the walk's root, with `/` separators. */
  rel: string;
}

interface Layers {
  gitignores: IgnoreFile[];
  excludes: IgnoreFile[];
}

/**
 * Yields the regular files under `root` depth-first, each directory's entries in byte order of
 * their names (directories in place, not first): the order of `rg --sort path`, which both grep
 * engines print in. Honours .gitignore files (the root's, nested ones, and those between the
 * workspace and `root`) and `.git/info/exclude`, also outside a git repository. Symlinks are not
 * followed, so a walk never leaves the workspace, and hidden files are included.
 */
export async function* walkFiles(opts: WalkOptions): AsyncGenerator<WalkedFile> {
  const rootPath = toSlashes(path.relative(opts.workspace, opts.root));
  const layers = await ancestorLayers(opts.workspace, rootPath);
  yield* walkDir(opts.root, rootPath, '', layers, opts);
}

async function* walkDir(
  dir: string,
  dirPath: string,
  dirRel: string,
  parent: Layers,
  opts: WalkOptions,
): AsyncGenerator<WalkedFile> {
  opts.signal.throwIfAborted();
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    // Unreadable or vanished since it was listed: skipped, as ripgrep skips it.
    return;
  }
  const layers = await ownLayers(dir, dirPath, entries, parent);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  for (const entry of entries) {
    const isDir = entry.isDirectory();
    if (!isDir && !entry.isFile()) continue;
    if (entry.name === '.git' || (isDir && SKIPPED_DIRS.has(entry.name))) continue;
    const entryPath = dirPath === '' ? entry.name : `${dirPath}/${entry.name}`;
    if (isIgnored(layers.gitignores, layers.excludes, entryPath, entry.name, isDir)) continue;
    const rel = dirRel === '' ? entry.name : `${dirRel}/${entry.name}`;
    const abs = path.join(dir, entry.name);
    if (isDir) {
      yield* walkDir(abs, entryPath, rel, layers, opts);
    } else if (!opts.filter || opts.filter(rel)) {
      yield { abs, path: entryPath, rel };
    }
  }
}

async function ownLayers(dir: string, dirPath: string, entries: Dirent[], parent: Layers): Promise<Layers> {
  let { gitignores, excludes } = parent;
  const prefix = dirPath === '' ? '' : `${dirPath}/`;
  if (entries.some((e) => e.name === '.gitignore' && !e.isDirectory())) {
    const rules = parseIgnoreFile(await readText(path.join(dir, '.gitignore')));
    if (rules.length > 0) gitignores = [...gitignores, { prefix, rules }];
  }
  if (entries.some((e) => e.name === '.git' && e.isDirectory())) {
    const rules = parseIgnoreFile(await readText(path.join(dir, '.git', 'info', 'exclude')));
    if (rules.length > 0) excludes = [...excludes, { prefix, rules }];
  }
  return { gitignores, excludes };
}

/** The ignore files of the workspace root and of every directory between it and the walk's root. */
async function ancestorLayers(workspace: string, rootPath: string): Promise<Layers> {
  const layers: Layers = { gitignores: [], excludes: [] };
  if (rootPath === '') return layers;
  const parts = rootPath.split('/');
  for (let depth = 0; depth < parts.length; depth++) {
    const relDir = parts.slice(0, depth).join('/');
    const dir = path.join(workspace, ...parts.slice(0, depth));
    const prefix = relDir === '' ? '' : `${relDir}/`;
    const gitignore = parseIgnoreFile(await readText(path.join(dir, '.gitignore')));
    if (gitignore.length > 0) layers.gitignores.push({ prefix, rules: gitignore });
    const exclude = parseIgnoreFile(await readText(path.join(dir, '.git', 'info', 'exclude')));
    if (exclude.length > 0) layers.excludes.push({ prefix, rules: exclude });
  }
  return layers;
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return '';
  }
}

export function toSlashes(p: string): string {
  return path.sep === '/' ? p : p.split(path.sep).join('/');
}

/**
 * A file filter for a user's glob, tested against paths relative to the searched directory. A
 * glob without a slash matches file names at any depth (`*.md`), as in .gitignore and ripgrep's
 * --glob, and one with a slash matches from the searched directory down; a leading `!` inverts it;
 * `*` also matches names starting with a dot.
 */
export function compileGlob(glob: string): (rel: string) => boolean {
  let pattern = glob.trim();
  const negate = pattern.startsWith('!');
  if (negate) pattern = pattern.slice(1);
  pattern = stripLeadingDotSlash(pattern);
  if (pattern.endsWith('/')) pattern += '**';
  const byName = !pattern.includes('/');
  // `/x.ts` means x.ts at the top only, as in .gitignore.
  if (pattern.startsWith('/')) pattern = pattern.slice(1);
  const isMatch = picomatch(pattern, { dot: true });
  return (rel) => isMatch(byName ? rel.slice(rel.lastIndexOf('/') + 1) : rel) !== negate;
}

export function stripLeadingDotSlash(pattern: string): string {
  let p = pattern;
  while (p.startsWith('./')) p = p.slice(2);
  return p;
}
