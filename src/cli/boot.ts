import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hearthHome } from '../config/sources.js';
import { createChunkLoader } from './chunk-loader.js';

/**
 * The package's `bin` (dist/cli/main.js): runs the bundle's entry chunk (src/cli/main.ts) through
 * the chunk loader, which keeps a V8 code cache per build and Node version in the Hearth home
 * ($HEARTH_HOME, else ~/.hearth; config files cannot move it) and beside the installed package
 * (`.code-cache`, where the installing user's first run leaves it). NODE_DISABLE_COMPILE_CACHE=1 (the
 * variable Node 22 reads for its own cache) turns it off.
 */
declare const HEARTH_BUNDLE: { id: string; entry: string };

const here = dirname(fileURLToPath(import.meta.url));
const off =
  process.env.NODE_DISABLE_COMPILE_CACHE !== undefined && process.env.NODE_DISABLE_COMPILE_CACHE !== '';
const home = hearthHome();
const build = `${process.version}-${process.arch}-${HEARTH_BUNDLE.id}`;
// A relative HEARTH_HOME lands wherever Hearth is started, likely inside a workspace: no code from there.
// Beside the package (outside dist/, so never packed): the cache a new home finds, written by the
// first run that may write there.
const loader = createChunkLoader(
  off || !isAbsolute(home) ? undefined : join(home, 'cache', 'code', build),
  off ? undefined : join(here, '..', '..', '.code-cache', build),
);
process.on('exit', () => loader.flush());
loader.load(join(here, HEARTH_BUNDLE.entry));
