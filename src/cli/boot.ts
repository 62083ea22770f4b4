import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hearthHome } from '../config/sources.js';
import { createChunkLoader } from './chunk-loader.js';

/**
 * The package's `bin` (dist/cli/main.js): runs the bundle's entry chunk (src/cli/main.ts) through
 * the chunk loader, which keeps a V8 code cache per build and Node version in the Hearth home
 * ($HEARTH_HOME, else ~/.hearth; config files cannot move it). NODE_DISABLE_COMPILE_CACHE=1 (the
 * variable Node 22 reads for its own cache) turns it off.
 */
declare const HEARTH_BUNDLE: { id: string; entry: string };

const here = dirname(fileURLToPath(import.meta.url));
const off =
  process.env.NODE_DISABLE_COMPILE_CACHE !== undefined && process.env.NODE_DISABLE_COMPILE_CACHE !== '';
const loader = createChunkLoader(
  off
    ? undefined
    : join(hearthHome(), 'cache', 'code', `${process.version}-${process.arch}-${HEARTH_BUNDLE.id}`),
);
process.on('exit', () => loader.flush());
// A chunk's `import()` of a package outside the bundle (sqlite-vec, sharp, ...) goes to Node's own
// loader through vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER, which Node 20 calls experimental and
// says so on stderr at its first use. It is the documented way, and the warning is not the user's.
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = ((warning: string | Error, ...rest: never[]) => {
  if (!String(warning).includes('USE_MAIN_CONTEXT_DEFAULT_LOADER')) emitWarning(warning, ...rest);
}) as typeof process.emitWarning;
loader.load(join(here, HEARTH_BUNDLE.entry));
