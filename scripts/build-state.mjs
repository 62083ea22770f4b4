/**
 * Whether dist/ was built from the sources as they are now: a SHA-256 over every file the build
 * reads (src/, web/, scripts/, package.json, the tsconfigs), kept in dist/build-stamp after a
 * build.
 *
 * Why: npm runs `prepare` on `npm ci`, but also whenever the checkout is installed as a directory,
 * which is what `npx hearth` does in a checkout (npm installs the project into its npx cache so
 * that its bin is linked). Without a check each of those rebuilt everything (a minute or two, with
 * no output). The acceptance tests use the same check to pack a current build.
 *
 *   node scripts/build-state.mjs prepare   build only when dist/ is missing or stale, saying so
 *   node scripts/build-state.mjs stamp     record the current sources (the end of `npm run build`)
 *   node scripts/build-state.mjs check     exit 0 when dist/ is current, 1 otherwise
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = join(root, 'dist', 'build-stamp');
const INPUTS = ['src', 'web', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

function* files(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return;
  if (stat.isFile()) {
    yield path;
    return;
  }
  for (const name of readdirSync(path).sort()) yield* files(join(path, name));
}

/** The hash of every build input's path and content. */
export function sourceHash() {
  const hash = createHash('sha256');
  for (const input of INPUTS) {
    for (const file of files(join(root, input))) {
      hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
    }
  }
  return hash.digest('hex');
}

export function isCurrent() {
  try {
    return readFileSync(STAMP, 'utf8').trim() === sourceHash();
  } catch {
    return false;
  }
}

function main(command) {
  switch (command) {
    case 'stamp':
      writeFileSync(STAMP, `${sourceHash()}\n`);
      return 0;
    case 'check':
      return isCurrent() ? 0 : 1;
    case 'prepare': {
      if (isCurrent()) return 0;
      process.stderr.write('hearth: building dist/ from the sources (about a minute, once)...\n');
      const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
      return built.status ?? 1;
    }
    default:
      process.stderr.write('usage: node scripts/build-state.mjs prepare|stamp|check\n');
      return 2;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = main(process.argv[2]);
}
