import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder of Hearth's own package.json, found from a module's address by walking up.
 *
 * A path relative to a module is not enough for files the package ships (the web UI in dist/web):
 * the same module runs from src/ (tests), from dist/ (the library) and from a bundled chunk in
 * dist/cli/chunks/ (the bin), each at another depth.
 */
export function packageRoot(moduleUrl: string): string {
  const start = dirname(fileURLToPath(moduleUrl));
  for (let dir = start; ; dir = dirname(dir)) {
    if (isHearthPackage(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`No hearth-agent package.json above ${start}`);
  }
}

function isHearthPackage(file: string): boolean {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === 'hearth-agent';
  } catch {
    return false;
  }
}
