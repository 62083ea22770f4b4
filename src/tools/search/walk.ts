import type { Dirent } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import {
  type IgnoreFile,
  type IgnoreRule,
  isIgnored,
  matchIgnoreRules,
  parseIgnoreFile,
} from './gitignore.js';
import type { SearchScope } from './scope.js';

/** Files handed on at once at most, so a consumer that stops early has not made the walk run far ahead. */
const BATCH_FILES = 256;

export interface WalkOptions {
  scope: SearchScope;
  signal: AbortSignal;
  /** Keeps a file when it returns true; receives the path relative to the scope's root, with `/` separators. */
  filter?: (rel: string) => boolean;
}

export interface WalkedFile {
  abs: string;
  /** Workspace-relative, with `/` separators: what tools print. */
  path: string;
  /** Relative to the walk's root, with `/` separators. */
  rel: string;
}

/** Ignore files found inside the walk; a nested repository starts afresh, as in git and ripgrep. */
interface Layers {
  gitignores: IgnoreFile[];
  excludes: IgnoreFile[];
}

/** A directory's entries in name order and the ignore rules it holds. */
interface Listing {
  entries: Dirent[];
  gitignore: IgnoreRule[];
  exclude: IgnoreRule[];
  /** It holds `.git`: the root of a repository. */
  isRepo: boolean;
}

interface Dir {
  abs: string;
  /** Workspace-relative, '' for the workspace. */
  path: string;
  /** Relative to the walk's root, '' for the root. */
  rel: string;
}

interface Walk {
  opts: WalkOptions;
  inherited: IgnoreFile[];
  excluded: IgnoreRule[];
}

/**
 * The built-in walker, used when ripgrep is not installed. Yields the regular files under the
 * scope's root in batches, depth-first, each directory's entries in name order: the order of
 * `rg --sort path`, which grep prints in. Honours .gitignore files and `.git/info/exclude`, also
 * outside a git repository, and the scope's rules; hidden files are included, symlinks are not
 * followed. A directory's sub-directories are listed as soon as it is, so their listings are
 * usually ready when the walk gets to them.
 */
export async function* walkFiles(opts: WalkOptions): AsyncGenerator<WalkedFile[]> {
  const { scope } = opts;
  const inherited = await Promise.all(
    scope.inherited.map(async (f) => ({
      prefix: f.dir,
      rules: parseIgnoreFile(await readText(path.join(scope.workspace, f.file))),
    })),
  );
  const walk: Walk = { opts, inherited, excluded: parseIgnoreFile(scope.exclude.join('\n')) };
  opts.signal.throwIfAborted();
  const listing = await listDir(scope.root);
  if (!listing) return;
  const root: Dir = { abs: scope.root, path: scope.rootPath, rel: '' };
  const batch: WalkedFile[] = [];
  yield* walkDir(walk, root, listing, { gitignores: [], excludes: [] }, batch);
  if (batch.length > 0) yield batch;
}

async function* walkDir(
  walk: Walk,
  dir: Dir,
  listing: Listing,
  parent: Layers,
  batch: WalkedFile[],
): AsyncGenerator<WalkedFile[]> {
  const prefix = dir.path === '' ? '' : `${dir.path}/`;
  const relPrefix = dir.rel === '' ? '' : `${dir.rel}/`;
  const absPrefix = dir.abs.endsWith(path.sep) ? dir.abs : dir.abs + path.sep;
  const layers = nestedLayers(parent, listing, prefix);
  const { filter } = walk.opts;
  const items: (WalkedFile | { dir: Dir; listing: Promise<Listing | undefined> })[] = [];
  for (const entry of listing.entries) {
    const isDir = entry.isDirectory();
    if (!isDir && !entry.isFile()) continue;
    const name = entry.name;
    const entryPath = prefix + name;
    if (matchIgnoreRules(walk.excluded, entryPath, name, isDir)) continue;
    if (isIgnored(layers.gitignores, layers.excludes, entryPath, name, isDir, walk.inherited)) continue;
    const sub = { abs: absPrefix + name, path: entryPath, rel: relPrefix + name };
    if (isDir) items.push({ dir: sub, listing: listDir(sub.abs) });
    else if (!filter || filter(sub.rel)) items.push(sub);
  }
  for (const item of items) {
    if ('dir' in item) {
      walk.opts.signal.throwIfAborted();
      const sub = await item.listing;
      if (sub) yield* walkDir(walk, item.dir, sub, layers, batch);
    } else {
      batch.push(item);
      if (batch.length >= BATCH_FILES) yield batch.splice(0);
    }
  }
}

function nestedLayers(parent: Layers, listing: Listing, prefix: string): Layers {
  const start = listing.isRepo ? { gitignores: [], excludes: [] } : parent;
  return {
    gitignores:
      listing.gitignore.length > 0
        ? [...start.gitignores, { prefix, rules: listing.gitignore }]
        : start.gitignores,
    excludes:
      listing.exclude.length > 0 ? [...start.excludes, { prefix, rules: listing.exclude }] : start.excludes,
  };
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
  const listing: Listing = { entries, gitignore: [], exclude: [], isRepo: false };
  for (const e of entries) {
    if (e.name === '.gitignore' && !e.isDirectory()) {
      listing.gitignore = parseIgnoreFile(await readText(path.join(dir, '.gitignore')));
    } else if (e.name === '.git') {
      listing.isRepo = true;
      if (e.isDirectory()) {
        listing.exclude = parseIgnoreFile(await readText(path.join(dir, '.git', 'info', 'exclude')));
      }
    }
  }
  return listing;
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return '';
  }
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

/** Letters, digits, `. _ - * ?` and `{a,b}` groups: read alike by picomatch and ripgrep's globs. */
const SIMPLE_NAME = /^[\w.*?-]*(?:\{[\w.*?-]*(?:,[\w.*?-]*)+\}[\w.*?-]*)*$/;

/**
 * The file-name part every file matching `glob` has, when it is simple enough for ripgrep's file
 * types (`*.ts` for `src/**\/*.ts`), so that ripgrep can skip other files early; undefined when
 * there is none. It narrows the search only: `compileGlob` still decides.
 */
export function globFileName(glob: string): string | undefined {
  const pattern = glob.trim();
  if (pattern.startsWith('!') || pattern.endsWith('/')) return undefined;
  const slash = pattern.lastIndexOf('/');
  const name = pattern.slice(slash + 1);
  const dirs = pattern.slice(0, slash + 1);
  if (name.includes('**') || !SIMPLE_NAME.test(name) || /[{}]/.test(dirs)) return undefined;
  return name === '*' ? undefined : name;
}
