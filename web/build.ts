/**
 * Builds the web UI into `dist/web` (or the folder given): one JavaScript and one CSS bundle with
 * content hashes in their names (served with a year-long cache), and `index.html` naming them.
 *
 * esbuild rather than Vite: the UI is one entry point with three small libraries, esbuild is
 * already in the tree (tsx and vitest run on it), and it needs no plugins or dev server for a
 * bundle this size. Run by `npm run build` (so `npm ci` builds it) and by the browser tests.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));

export interface WebBuild {
  outdir: string;
  /** Each shipped file with its size and gzip size in bytes. */
  files: Array<{ name: string; bytes: number; gzip: number }>;
}

export async function buildWeb(outdir = resolve(here, '../dist/web')): Promise<WebBuild> {
  await rm(outdir, { recursive: true, force: true });
  await mkdir(join(outdir, 'assets'), { recursive: true });
  const result = await build({
    entryPoints: [join(here, 'src/main.tsx')],
    bundle: true,
    format: 'esm',
    target: ['es2022'],
    minify: true,
    sourcemap: false,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    outdir: join(outdir, 'assets'),
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
  const script = outputs.find((name) => name.endsWith('.js'));
  const style = outputs.find((name) => name.endsWith('.css'));
  if (!script || !style) throw new Error(`The web build made no script or stylesheet: ${outputs.join(', ')}`);
  const page = (await readFile(join(here, 'index.html'), 'utf8'))
    .replace('%SCRIPT%', `/assets/${script}`)
    .replace('%STYLE%', `/assets/${style}`);
  await writeFile(join(outdir, 'index.html'), page);
  const files = [];
  for (const name of await readdir(join(outdir, 'assets'))) {
    const body = await readFile(join(outdir, 'assets', name));
    files.push({ name: `assets/${name}`, bytes: body.length, gzip: gzipSync(body).length });
  }
  return { outdir, files };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { outdir, files } = await buildWeb(process.argv[2] ? resolve(process.argv[2]) : undefined);
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  for (const f of files) process.stderr.write(`web: ${f.name} ${kb(f.bytes)} (${kb(f.gzip)} gzip)\n`);
  process.stderr.write(`web: built into ${outdir}\n`);
}
