/**
 * Bundles the command-line program into dist/cli with esbuild: `main.js` (the package's `bin`) and
 * the chunks it loads from dist/cli/chunks.
 *
 * Why a bundle: Node loads an ES module file by file, resolving and reading each (about 240 files
 * for Hearth and its dependencies), which cost more than starting Node itself. One entry file with
 * its shared code in a few chunks loads in a fraction of that. Code splitting keeps what only some
 * runs need (the REPL, subcommands, YAML) in chunks loaded by dynamic import, so `--version`,
 * `--help` and a one-shot task load only their own part. The library keeps its file-per-module
 * build (`tsc`, dist/index.js with types) for `import 'hearth-agent'`.
 *
 * Why the chunks are CommonJS: `main.js` (src/cli/boot.ts) loads them through src/cli/chunk-loader.ts
 * with a V8 code cache, which Node 20 offers only for scripts, not for ES modules. esbuild splits
 * code only into ES modules, so each chunk is split as one and then turned into CommonJS here: its
 * imports become `require` calls and its dynamic imports calls of the loader's `__hearth_import`.
 *
 * better-sqlite3 stays outside: it loads a native addon relative to its own files. zod's messages in
 * other languages (about half of zod's code) are left out: Hearth words its errors in English and
 * never calls z.config with a locale.
 */
import { createHash } from 'node:crypto';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { build, transform } from 'esbuild';

const outdir = 'dist/cli';

/** zod's `locales` namespace with English only. */
const englishOnlyZod = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      args.importer.includes('/node_modules/zod/')
        ? { path: join(dirname(args.importer), args.path), namespace: 'zod-locales' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(join(dirname(args.path), 'en.js'))};`,
      resolveDir: dirname(args.path),
    }));
  },
};

/** What esbuild writes for an `import(x)` it turns into CommonJS, up to `x`. */
const CONVERTED_IMPORT = 'Promise.resolve().then(() => __toESM(require(';

/**
 * One ES-module chunk as CommonJS, its source map carried through. Every `import(x)` becomes
 * `__hearth_import(() => x)`, which the chunk loader gives each chunk: another chunk through the
 * loader, a package through Node's own `import()` (a script compiled from a V8 code cache cannot
 * make one itself in Node 20: its dynamic-import callback is lost).
 */
async function toCommonJs(file, code, map, commonJsPackage) {
  // The entry's `#!` line (src/cli/main.ts has one) is the bin's business, not a chunk's.
  const text = code.replace(/^#!.*/, '');
  const inline = `//# sourceMappingURL=data:application/json;base64,${Buffer.from(map).toString('base64')}`;
  const result = await transform(`${text.replace(/\/\/# sourceMappingURL=\S+\s*$/, '')}\n${inline}\n`, {
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    supported: { 'dynamic-import': false },
    sourcefile: file,
    sourcemap: 'external',
    define: { 'import.meta.url': '__hearth_url' },
    logLevel: 'warning',
  });
  // `import.meta.url` (the chunk's own address) for the few modules that use it.
  const prelude = result.code.includes('__hearth_url')
    ? 'var __hearth_url = require("node:url").pathToFileURL(__filename).href;\n'
    : '';
  // esbuild closes `require(`, `__toESM(` and `then(` after x: three parentheses, as many as opened here.
  let body = result.code.replaceAll(CONVERTED_IMPORT, '__hearth_import(() => ((');
  if (commonJsPackage) body += COMMONJS_NAMESPACE;
  // The rewrite must leave valid JavaScript; esbuild says so or throws.
  await transform(body, { loader: 'js', logLevel: 'silent' });
  return {
    code: `${prelude}${body}//# sourceMappingURL=${file.split('/').pop()}.map\n`,
    map: prelude ? shiftMap(result.map) : result.map,
  };
}

/**
 * Appended to a chunk that is a CommonJS package loaded by `import()` (Readability, turndown):
 * esbuild gives such a chunk only a `default` export, where Node's own `import()` of the package
 * also offers its `module.exports` properties by name (`const { Readability } = await import(...)`).
 * The bundle must behave as the sources do under Node.
 */
const COMMONJS_NAMESPACE = `
{ const d = module.exports.default;
  if (d !== null && (typeof d === 'object' || typeof d === 'function')) module.exports = Object.assign({}, d, { default: d }); }
`;

/** A source map for code with one more line at its top. */
function shiftMap(map) {
  const parsed = JSON.parse(map);
  parsed.mappings = `;${parsed.mappings}`;
  return JSON.stringify(parsed);
}

await rm(outdir, { recursive: true, force: true });
const split = await build({
  entryPoints: { main: 'src/cli/main.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  entryNames: 'chunks/[name]-[hash]',
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.cjs' },
  // Native code, or packages that find their own files (binaries, the sqlite-vec extension, the
  // browser driver) next to their modules: loaded from node_modules as they are.
  external: ['better-sqlite3', 'sqlite-vec', 'node-llama-cpp', 'playwright-core', 'sharp'],
  plugins: [englishOnlyZod],
  sourcemap: true,
  logLevel: 'warning',
  metafile: true,
  write: false,
});
const maps = new Map(split.outputFiles.filter((f) => f.path.endsWith('.map')).map((f) => [f.path, f.text]));
const root = process.cwd();
const bundleHash = createHash('sha256');
let entry;
for (const file of split.outputFiles.filter((f) => f.path.endsWith('.cjs'))) {
  const name = relative(root, file.path);
  const meta = split.metafile.outputs[name];
  if (meta.entryPoint === 'src/cli/main.ts') entry = relative(outdir, name);
  const commonJsPackage =
    meta.entryPoint !== undefined && split.metafile.inputs[meta.entryPoint]?.format === 'cjs';
  const out = await toCommonJs(name, file.text, maps.get(`${file.path}.map`), commonJsPackage);
  bundleHash.update(name).update(out.code);
  await mkdir(dirname(name), { recursive: true });
  await writeFile(name, out.code);
  await writeFile(`${name}.map`, out.map);
}
if (!entry) throw new Error('the build made no chunk for src/cli/main.ts');
// Kept for test/cli/bundle.test.ts, which checks what `--help` and `--version` load.
await writeFile(`${outdir}/meta.json`, JSON.stringify(split.metafile));

// The bin, and the chunk loader beside it (its own file, so the bench can load a chunk as the bin
// does), with the entry chunk's name and an id that changes with any chunk (code caches are kept
// per id). Both are CommonJS (dist/cli/package.json says so to Node): an ES-module entry makes
// Node start its ES-module loader and build an ES-module facade of every built-in the entry
// imports, before Hearth's first line runs; a CommonJS entry skips that (`npm run bench`, --help).
// `import.meta.url` is the file's own address, as the chunks have it.
const bin = {
  outdir,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  define: { 'import.meta.url': '__hearth_url' },
  banner: { js: '"use strict";\nvar __hearth_url = require("node:url").pathToFileURL(__filename).href;' },
};
await writeFile(`${outdir}/package.json`, `${JSON.stringify({ type: 'commonjs' })}\n`);
await build({ ...bin, entryPoints: { 'chunk-loader': 'src/cli/chunk-loader.ts' } });
await build({
  ...bin,
  entryPoints: { main: 'src/cli/boot.ts' },
  external: ['./chunk-loader.js'],
  define: {
    ...bin.define,
    'HEARTH_BUNDLE.id': JSON.stringify(bundleHash.digest('hex').slice(0, 16)),
    'HEARTH_BUNDLE.entry': JSON.stringify(entry),
  },
  banner: { js: `#!/usr/bin/env node\n${bin.banner.js}` },
});
// The bin is run by its `#!` line (npm links it; `npx hearth` runs it): it must stay executable after
// every build, not only after the install that first linked it.
await chmod(`${outdir}/main.js`, 0o755);
