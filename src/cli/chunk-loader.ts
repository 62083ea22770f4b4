/**
 * Loads the bundled CLI's chunks (CommonJS files made by scripts/build-cli.mjs) with a V8 code
 * cache, so that a run after the first one skips parsing and compiling most of its JavaScript.
 *
 * Why our own: Node 22 caches compiled modules itself (`module.enableCompileCache`), Node 20 (our
 * floor) does not, and it offers no way to hand V8 a cache for an ES module. A script compiled by
 * `vm.Script` takes one, which is why the chunks are CommonJS. The `v8-compile-cache` package does
 * this for every `require` by patching Node's module loader and keeps its caches in the shared temp
 * directory, where another local user could plant one; this loader touches only Hearth's own chunks
 * and keeps their caches in the Hearth home.
 *
 * What V8 checks and what it does not (Node 20, measured): it rejects a cache made by another V8
 * version or with other V8 flags, but it accepts a truncated or corrupted cache, and one made for
 * another source of the same length, and then runs whatever it holds. So a cache file here is used
 * only when its header matches the chunk file it was made from (size, modification and change time:
 * the change time moves with any write, even one that puts the modification time back; the folder
 * is per build and Node version) and its payload matches the SHA-256 kept beside it. A cache
 * is code: it lives in the Hearth home, which a sandboxed command cannot write (the home's own
 * `.hearth` folder is protected even when the workspace is the home folder).
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import vm from 'node:vm';

const MAGIC = Buffer.from('HRTHCC01');
/** Magic, the source's size, modification and change times, the SHA-256 of the payload. */
const HEADER_BYTES = MAGIC.length + 3 * 8 + 32;
const SUM_AT = MAGIC.length + 3 * 8;

/** What a loader did with its caches, for tests and the bench. */
export interface CacheCounts {
  /** Chunks compiled from a cache V8 accepted. */
  used: number;
  /** Chunks compiled from source: no cache, or one that did not match (header, checksum, or V8's own check). */
  compiled: number;
  /** Caches written by `flush`. */
  written: number;
}

export interface ChunkLoader {
  /** Runs a chunk (once; later calls return its exports) and returns its exports. */
  load(file: string): unknown;
  /** Writes a cache for every chunk compiled from source; call when the process is about to exit. */
  flush(): void;
  readonly counts: CacheCounts;
}

/** What a cache must match of the chunk file it was made from. */
type SourceStamp = [size: number, mtimeMs: number, ctimeMs: number];

interface Compiled {
  script: vm.Script;
  cacheFiles: string[];
  stamp: SourceStamp;
}

type Module = { exports: unknown };

/**
 * A loader keeping its caches in `cacheDir` (one folder per build and Node version: the caller
 * names it); without one, chunks are compiled from source every time. `sharedDir`, when given, is
 * read when `cacheDir` has no cache for a chunk and written beside it where it can be: a cache
 * beside the installed package, which a new Hearth home (a first run, CI, a container) finds too.
 */
export function createChunkLoader(cacheDir: string | undefined, sharedDir?: string): ChunkLoader {
  const counts: CacheCounts = { used: 0, compiled: 0, written: 0 };
  const modules = new Map<string, Module>();
  const uncached: Compiled[] = [];

  const load = (file: string): unknown => {
    const known = modules.get(file);
    if (known) return known.exports;
    const module: Module = { exports: {} };
    // Before running it: chunks that require each other get the exports filled so far, as in Node.
    modules.set(file, module);
    const fd = openSync(file, 'r');
    let source: string;
    let stamp: SourceStamp;
    try {
      const { size, mtimeMs, ctimeMs } = fstatSync(fd);
      stamp = [size, mtimeMs, ctimeMs];
      source = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
    const cacheFiles = [cacheDir, sharedDir].flatMap((d) =>
      d === undefined ? [] : [join(d, `${basename(file)}.v8`)],
    );
    let cachedData: Buffer | undefined;
    for (const cacheFile of cacheFiles) {
      cachedData = readCache(cacheFile, stamp);
      if (cachedData) break;
    }
    // The wrapper keeps the file's line numbers; ES modules (what the chunks were) are strict.
    const script = new vm.Script(
      `(function (exports, require, module, __filename, __dirname, __hearth_import) {"use strict";${source}\n})`,
      { filename: file, cachedData },
    );
    if (cachedData && !script.cachedDataRejected) counts.used++;
    else {
      counts.compiled++;
      if (cacheFiles.length > 0) uncached.push({ script, cacheFiles, stamp });
    }
    const dir = dirname(file);
    const nodeRequire = createRequire(file);
    // Chunks name each other by relative path; everything else (Node's modules, the packages left
    // outside the bundle) is Node's to load.
    const isChunk = (id: string) => id.startsWith('./') || id.startsWith('../');
    const require = Object.assign((id: string) => (isChunk(id) ? load(resolve(dir, id)) : nodeRequire(id)), {
      resolve: nodeRequire.resolve,
      cache: nodeRequire.cache,
    });
    // What the chunk's `import(x)` became (scripts/build-cli.mjs): `x` is evaluated as late as the
    // import would have been. A package goes through this module's own `import()`, since a script
    // compiled from a code cache loses its dynamic-import callback (Node 20).
    const dynamicImport = (specifier: () => string) =>
      Promise.resolve().then(() => {
        const id = specifier();
        return isChunk(id) ? load(resolve(dir, id)) : import(id);
      });
    const run = script.runInThisContext() as (...args: unknown[]) => void;
    run.call(undefined, module.exports, require, module, file, dir, dynamicImport);
    return module.exports;
  };

  const flush = () => {
    if (uncached.length === 0) return;
    const writable = [cacheDir, sharedDir].filter((dir): dir is string => dir !== undefined && makeDir(dir));
    for (const { script, cacheFiles, stamp } of uncached.splice(0)) {
      // Made now, after the run, the cache holds every function compiled so far, not only the top level.
      const payload = script.createCachedData();
      for (const cacheFile of cacheFiles) {
        if (writable.includes(dirname(cacheFile)) && writeCache(cacheFile, payload, stamp)) counts.written++;
      }
    }
  };
  return { load, flush, counts };
}

/** Makes a cache folder (pruning old ones when it is new); false when it cannot be written. */
function makeDir(cacheDir: string): boolean {
  try {
    if (mkdirSync(cacheDir, { recursive: true, mode: 0o700 }) !== undefined) pruneOthers(cacheDir);
    return true;
  } catch {
    return false;
  }
}

/** Caches of builds and Node versions kept beside a new one (a few: several installs may take turns). */
const KEEP_OTHERS = 3;

/** Removes all but the newest few other cache folders beside `cacheDir` (old builds, old Node versions). */
function pruneOthers(cacheDir: string): void {
  const root = dirname(cacheDir);
  const others = readdirSync(root)
    .map((name) => join(root, name))
    .filter((path) => path !== cacheDir)
    .map((path) => ({ path, mtimeMs: statSync(path).mtimeMs }))
    .sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const { path } of others.slice(KEEP_OTHERS)) rmSync(path, { recursive: true, force: true });
}

/** The cache's payload when its header matches the source and its checksum the payload, else undefined. */
function readCache(cacheFile: string, stamp: SourceStamp): Buffer | undefined {
  let data: Buffer;
  try {
    data = readFileSync(cacheFile);
  } catch {
    return undefined;
  }
  if (data.length <= HEADER_BYTES || !data.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  if (stamp.some((value, i) => data.readDoubleLE(MAGIC.length + 8 * i) !== value)) return undefined;
  const payload = data.subarray(HEADER_BYTES);
  const sum = data.subarray(SUM_AT, HEADER_BYTES);
  return createHash('sha256').update(payload).digest().equals(sum) ? payload : undefined;
}

/** Writes a cache file whole or not at all (a reader never sees half of one). */
function writeCache(cacheFile: string, payload: Buffer, stamp: SourceStamp): boolean {
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header);
  for (const [i, value] of stamp.entries()) header.writeDoubleLE(value, MAGIC.length + 8 * i);
  createHash('sha256').update(payload).digest().copy(header, SUM_AT);
  const temp = `${cacheFile}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, Buffer.concat([header, payload]), { mode: 0o600 });
    renameSync(temp, cacheFile);
    return true;
  } catch {
    rmSync(temp, { force: true });
    return false;
  }
}
