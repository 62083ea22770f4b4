import type { Dirent } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { type IgnoreFile, type IgnoreRule, isIgnored, parseIgnoreFile } from './gitignore.js';

/**
 * Never entered during a walk, whatever the ignore files say: their contents dwarf the project and
 * are almost never what a search is after. A walk that starts inside one (the caller named it)
 * goes ahead.
 */
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

/**
 * Directory listings requested ahead of the walk, in walk order. Each readdir is a thread-pool
 * round trip, and waiting for them one at a time was most of a walk's time; the cap also bounds
 * the listings held before the walk reaches them.
 */
const READ_AHEAD_DIRS = 32;

/** Files handed on at once at most, so a consumer that stops early has not made the walk run far ahead. */
const BATCH_FILES = 256;

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

/** A directory's entries in walk order, with the rules of the ignore files it holds. */
interface Listing {
  entries: Dirent[];
  gitignore: IgnoreRule[];
  exclude: IgnoreRule[];
}

interface DirItem {
  abs: string;
  path: string;
  rel: string;
  /**
   * Its contents once requested, undefined when it cannot be read. Always present (it tells a
   * DirItem from a file), and cleared once the walk has entered it.
   */
  frame: Promise<Frame | undefined> | undefined;
  /** Its contents as soon as they have arrived, so that read-ahead can look further in. */
  ready: Frame | undefined;
}

/** A directory's files and sub-directories in walk order, the files already filtered. */
interface Frame {
  /** Ignore files that apply inside this directory, its own included. */
  layers: Layers;
  items: (WalkedFile | DirItem)[];
  next: number;
  dirs: DirItem[];
  /** Sub-directories the walk has entered. */
  entered: number;
}

/**
 * Yields the regular files under `root` in batches, depth-first, each directory's entries in byte
 * order of their names (directories in place, not first): the order of `rg --sort path`, which
 * both grep engines print in. Honours .gitignore files (the root's, nested ones, and those between
 * the workspace and `root`) and `.git/info/exclude`, also outside a git repository. Symlinks are
 * not followed, so a walk never leaves the workspace, and hidden files are included. Batches save
 * consumers an await per file; concatenated, they are the walk's order.
 */
export async function* walkFiles(opts: WalkOptions): AsyncGenerator<WalkedFile[]> {
  const root = path.resolve(opts.root);
  const rootPath = toSlashes(path.relative(opts.workspace, root));
  const ancestors = await ancestorLayers(opts.workspace, rootPath);
  opts.signal.throwIfAborted();
  const rootListing = await listDir(root);
  if (!rootListing) return;
  const rootItem: DirItem = { abs: root, path: rootPath, rel: '', frame: undefined, ready: undefined };
  const stack = [openFrame(rootItem, rootListing, ancestors, opts.filter)];

  let ahead = 0;
  let closed = false;
  const request = (dir: DirItem, parent: Layers) => {
    ahead += 1;
    dir.frame = listDir(dir.abs).then((listing) => {
      dir.ready = listing && openFrame(dir, listing, parent, opts.filter);
      readAhead();
      return dir.ready;
    });
    // A failure surfaces where the walk awaits it; a walk that stopped first never asks.
    dir.frame.catch(() => {});
  };
  // The next directories in walk order among those known: deeper frames' first, and inside the
  // ones that have already arrived before their later siblings.
  const requestIn = (frame: Frame, from: number): boolean => {
    for (let i = from; i < frame.dirs.length; i++) {
      const dir = frame.dirs[i]!;
      if (dir.frame === undefined) {
        if (ahead >= READ_AHEAD_DIRS) return false;
        request(dir, frame.layers);
      } else if (dir.ready && !requestIn(dir.ready, 0)) {
        return false;
      }
    }
    return true;
  };
  const readAhead = () => {
    for (let f = stack.length - 1; f >= 0 && !closed; f--) {
      const frame = stack[f]!;
      if (!requestIn(frame, frame.entered)) return;
    }
  };

  try {
    readAhead();
    let batch: WalkedFile[] = [];
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]!;
      const item = frame.items[frame.next++];
      if (item === undefined) {
        stack.pop();
        continue;
      }
      if (!('frame' in item)) {
        batch.push(item);
        if (batch.length >= BATCH_FILES) {
          yield batch;
          batch = [];
        }
        continue;
      }
      if (batch.length > 0) {
        yield batch;
        batch = [];
      }
      opts.signal.throwIfAborted();
      frame.entered += 1;
      if (item.frame === undefined) request(item, frame.layers);
      const child = item.ready ?? (await item.frame);
      ahead -= 1;
      item.frame = undefined;
      item.ready = undefined;
      if (child) stack.push(child);
      readAhead();
    }
    if (batch.length > 0) yield batch;
  } finally {
    closed = true;
  }
}

function openFrame(
  dir: DirItem,
  listing: Listing,
  parent: Layers,
  filter: ((rel: string) => boolean) | undefined,
): Frame {
  const prefix = dir.path === '' ? '' : `${dir.path}/`;
  const relPrefix = dir.rel === '' ? '' : `${dir.rel}/`;
  const absPrefix = dir.abs.endsWith(path.sep) ? dir.abs : dir.abs + path.sep;
  const layers: Layers = {
    gitignores:
      listing.gitignore.length > 0
        ? [...parent.gitignores, { prefix, rules: listing.gitignore }]
        : parent.gitignores,
    excludes:
      listing.exclude.length > 0 ? [...parent.excludes, { prefix, rules: listing.exclude }] : parent.excludes,
  };
  const checkIgnores = layers.gitignores.length > 0 || layers.excludes.length > 0;
  const items: (WalkedFile | DirItem)[] = [];
  const dirs: DirItem[] = [];
  for (const entry of listing.entries) {
    const name = entry.name;
    const isDir = entry.isDirectory();
    if (!isDir && !entry.isFile()) continue;
    if (name === '.git' || (isDir && SKIPPED_DIRS.has(name))) continue;
    const entryPath = prefix + name;
    if (checkIgnores && isIgnored(layers.gitignores, layers.excludes, entryPath, name, isDir)) continue;
    const rel = relPrefix + name;
    if (isDir) {
      const sub: DirItem = {
        abs: absPrefix + name,
        path: entryPath,
        rel,
        frame: undefined,
        ready: undefined,
      };
      items.push(sub);
      dirs.push(sub);
    } else if (!filter || filter(rel)) {
      items.push({ abs: absPrefix + name, path: entryPath, rel });
    }
  }
  return { layers, items, next: 0, dirs, entered: 0 };
}

/** A directory's sorted entries and ignore rules, or undefined when it cannot be read (skipped, as ripgrep does). */
async function listDir(dir: string): Promise<Listing | undefined> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let gitignore: IgnoreRule[] = [];
  let exclude: IgnoreRule[] = [];
  for (const e of entries) {
    if (e.name === '.gitignore' && !e.isDirectory()) {
      gitignore = parseIgnoreFile(await readText(path.join(dir, '.gitignore')));
    } else if (e.name === '.git' && e.isDirectory()) {
      exclude = parseIgnoreFile(await readText(path.join(dir, '.git', 'info', 'exclude')));
    }
  }
  return { entries, gitignore, exclude };
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
