/**
 * `npm test` puts this checkout's node_modules/.bin on PATH, and with it the language servers the
 * diagnostics tests use (typescript-language-server, pyright): every Hearth a test starts would
 * find them and check each edit, starting servers all over the suite and adding notes to tool
 * results the tests compare. So tests run without that folder on PATH; the diagnostics tests put
 * it back where they mean it, as a global install would.
 */
import { join, resolve } from 'node:path';

const bin = resolve(join(import.meta.dirname, '..', '..', 'node_modules', '.bin'));
process.env.PATH = (process.env.PATH ?? '')
  .split(':')
  .filter((dir) => resolve(dir || '.') !== bin)
  .join(':');
