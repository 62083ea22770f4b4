import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createChunkLoader } from '../../src/cli/chunk-loader.js';

/**
 * The chunk loader over real chunk files and real V8 code caches. What V8 itself does not check
 * (a corrupt cache, one for another source of the same length) must be caught by the loader: V8
 * would run the cache's code instead of the file's.
 */
let dir: string;
let cacheDir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-chunks-'));
  cacheDir = join(dir, 'cache', 'v-build');
  // Two chunks as the build writes them: CommonJS, one requiring the other by relative path.
  await writeFile(
    join(dir, 'a.cjs'),
    'const b = require("./b.cjs");\nexports.answer = () => b.base() + 1;\n',
  );
  await writeFile(join(dir, 'b.cjs'), 'exports.base = () => 41;\n');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Answer = { answer(): number };
const answerOf = (exports: unknown) => (exports as Answer).answer();

type Run = { answer: number; counts: ReturnType<typeof createChunkLoader>['counts'] };

/** Loads a.cjs with a new loader and writes what it compiled. */
function run(): Run {
  const loader = createChunkLoader(cacheDir);
  const answer = answerOf(loader.load(join(dir, 'a.cjs')));
  loader.flush();
  return { answer, counts: { ...loader.counts } };
}

const loaderFile = fileURLToPath(new URL('../../dist/cli/chunk-loader.js', import.meta.url));

/** `run` in a process of its own (the built loader, as the CLI has it), with `nodeFlags`. */
function runInChild(nodeFlags: string[] = []): Run {
  const script = `import { createChunkLoader } from ${JSON.stringify(loaderFile)};
const loader = createChunkLoader(${JSON.stringify(cacheDir)});
const answer = loader.load(${JSON.stringify(join(dir, 'a.cjs'))}).answer();
loader.flush();
process.stdout.write(JSON.stringify({ answer, counts: loader.counts }));`;
  const out = execFileSync(process.execPath, [...nodeFlags, '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return JSON.parse(out) as Run;
}

describe('createChunkLoader', () => {
  it('writes a cache per chunk on the first run and uses them on the next', async () => {
    expect(runInChild()).toEqual({ answer: 42, counts: { used: 0, compiled: 2, written: 2 } });
    expect((await readdir(cacheDir)).sort()).toEqual(['a.cjs.v8', 'b.cjs.v8']);
    expect(runInChild()).toEqual({ answer: 42, counts: { used: 2, compiled: 0, written: 0 } });
  });

  it('finds the cache beside the package from a new home, and fills both', async () => {
    const shared = join(dir, 'package', '.code-cache', 'v-build');
    const first = createChunkLoader(cacheDir, shared);
    expect(answerOf(first.load(join(dir, 'a.cjs')))).toBe(42);
    first.flush();
    expect(first.counts).toEqual({ used: 0, compiled: 2, written: 4 });
    // A new home: nothing in its own cache, all of it beside the package.
    const fresh = createChunkLoader(join(dir, 'new-home', 'v-build'), shared);
    expect(answerOf(fresh.load(join(dir, 'a.cjs')))).toBe(42);
    fresh.flush();
    expect(fresh.counts).toEqual({ used: 2, compiled: 0, written: 0 });
    // A package folder it cannot write to only leaves the home's cache.
    await writeFile(join(dir, 'not-a-dir'), '');
    const readOnly = createChunkLoader(join(dir, 'other-home', 'v-build'), join(dir, 'not-a-dir', 'v-build'));
    readOnly.load(join(dir, 'a.cjs'));
    readOnly.flush();
    expect(readOnly.counts).toEqual({ used: 0, compiled: 2, written: 2 });
  });

  it("runs a chunk's dynamic imports, of chunks and of packages, also when compiled from its cache", async () => {
    // As the build writes `import("./b.cjs")` and `import("node:path")`.
    await writeFile(
      join(dir, 'a.cjs'),
      'exports.answer = async () => (await __hearth_import(() => ("./b.cjs"))).base() + (await __hearth_import(() => ("node:path"))).sep.length;\n',
    );
    const script = (file: string) => `import { createChunkLoader } from ${JSON.stringify(loaderFile)};
const loader = createChunkLoader(${JSON.stringify(cacheDir)});
const answer = await loader.load(${JSON.stringify(file)}).answer();
loader.flush();
process.stdout.write(JSON.stringify({ answer, counts: loader.counts }));`;
    const run = () =>
      JSON.parse(
        execFileSync(process.execPath, ['--input-type=module', '-e', script(join(dir, 'a.cjs'))], {
          encoding: 'utf8',
        }),
      ) as Run;
    expect(run()).toEqual({ answer: 42, counts: { used: 0, compiled: 2, written: 2 } });
    expect(run()).toEqual({ answer: 42, counts: { used: 2, compiled: 0, written: 0 } });
  });

  it('runs a chunk once however often it is required', async () => {
    await writeFile(
      join(dir, 'b.cjs'),
      'globalThis.__chunkRuns = (globalThis.__chunkRuns ?? 0) + 1;\nexports.base = () => 41;\n',
    );
    await writeFile(
      join(dir, 'c.cjs'),
      'require("./b.cjs");\nexports.answer = () => require("./a.cjs").answer();\n',
    );
    const loader = createChunkLoader(cacheDir);
    expect(answerOf(loader.load(join(dir, 'c.cjs')))).toBe(42);
    expect((globalThis as { __chunkRuns?: number }).__chunkRuns).toBe(1);
    delete (globalThis as { __chunkRuns?: number }).__chunkRuns;
  });

  it('ignores a corrupt or truncated cache and writes a good one in its place', async () => {
    run();
    const file = join(cacheDir, 'b.cjs.v8');
    const good = await readFile(file);
    const corrupt = Buffer.from(good);
    for (let i = 0; i < 32; i++) corrupt[Math.floor(corrupt.length / 2) + i]! ^= 0x5a;
    await writeFile(file, corrupt);
    expect(run()).toEqual({ answer: 42, counts: { used: 1, compiled: 1, written: 1 } });
    await writeFile(file, good.subarray(0, good.length - 100));
    expect(run()).toEqual({ answer: 42, counts: { used: 1, compiled: 1, written: 1 } });
    expect(run().counts).toEqual({ used: 2, compiled: 0, written: 0 });
  });

  it('never runs a stale cache for a chunk changed in place, even to the same length and modification time', async () => {
    run();
    const file = join(dir, 'b.cjs');
    const before = await stat(file);
    // The same length: V8 alone would take the old cache and run the old code.
    await writeFile(file, 'exports.base = () => 99;\n');
    await utimes(file, before.atime, before.mtime);
    expect(run()).toEqual({ answer: 100, counts: { used: 1, compiled: 1, written: 1 } });
  });

  it('leaves a cache V8 rejects (made with other V8 flags, as by another Node version) and compiles', async () => {
    expect(runInChild(['--no-opt']).counts.written).toBe(2);
    expect(runInChild()).toEqual({ answer: 42, counts: { used: 0, compiled: 2, written: 2 } });
    expect(runInChild().counts).toEqual({ used: 2, compiled: 0, written: 0 });
  });

  it('runs without caching where the cache folder cannot be made', async () => {
    await writeFile(join(dir, 'cache'), 'a file where the folder would go');
    expect(run()).toEqual({ answer: 42, counts: { used: 0, compiled: 2, written: 0 } });
  });

  it('compiles from source every time without a cache folder', () => {
    const loader = createChunkLoader(undefined);
    expect(answerOf(loader.load(join(dir, 'a.cjs')))).toBe(42);
    loader.flush();
    expect(loader.counts).toEqual({ used: 0, compiled: 2, written: 0 });
  });

  it('keeps the newest few cache folders of other builds beside a new one', async () => {
    const root = join(dir, 'cache');
    for (const [i, name] of ['old-1', 'old-2', 'old-3', 'old-4'].entries()) {
      await mkdir(join(root, name), { recursive: true });
      await writeFile(join(root, name, 'x.v8'), '');
      const when = new Date(Date.now() - (10 - i) * 60_000);
      await utimes(join(root, name), when, when);
    }
    run();
    expect((await readdir(root)).sort()).toEqual(['old-2', 'old-3', 'old-4', 'v-build']);
  });
});
