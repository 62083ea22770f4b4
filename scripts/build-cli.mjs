/**
 * Bundles the command-line program into dist/cli/main.js (the package's `bin`) with esbuild.
 *
 * Why a bundle: Node loads an ES module file by file, resolving and reading each (about 240 files
 * for Hearth and its dependencies), which cost more than starting Node itself. One entry file with
 * its shared code in a few chunks loads in a fraction of that. Code splitting keeps what only some
 * runs need (the REPL, subcommands, YAML) in chunks loaded by dynamic import, so `--version`,
 * `--help` and a one-shot task load only their own part. The library keeps its file-per-module
 * build (`tsc`, dist/index.js with types) for `import 'hearth-agent'`.
 *
 * better-sqlite3 stays outside: it loads a native addon relative to its own files. zod's messages in
 * other languages (about half of zod's code) are left out: Hearth words its errors in English and
 * never calls z.config with a locale.
 */
import { rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

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
await rm(outdir, { recursive: true, force: true });
const result = await build({
  entryPoints: { main: 'src/cli/main.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  // Native code, or packages that find their own files (binaries, the sqlite-vec extension, the
  // browser driver) next to their modules: loaded from node_modules as they are.
  external: ['better-sqlite3', 'sqlite-vec', 'node-llama-cpp', 'playwright-core', 'sharp'],
  plugins: [englishOnlyZod],
  sourcemap: true,
  // Bundled CommonJS dependencies (commander) call require() for Node's own modules.
  banner: {
    js: "import { createRequire as __hearthRequire } from 'node:module';\nconst require = __hearthRequire(import.meta.url);",
  },
  logLevel: 'warning',
  metafile: true,
});
// Kept for test/cli/bundle.test.ts, which checks what `--help` and `--version` load.
await writeFile(`${outdir}/meta.json`, JSON.stringify(result.metafile));
