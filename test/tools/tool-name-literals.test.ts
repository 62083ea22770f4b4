import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { toolGroups } from '../../src/tools/catalog.js';

const SRC = join(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/**
 * What a call touches is the tool's own declaration (src/tools/types.ts `Touches`), so nothing outside
 * src/tools/ may know a tool by its name: adding a tool, or a user's own, must need no change elsewhere.
 * Comments may name tools (they document); code may not.
 */
it('no code outside src/tools/ names a built-in tool', () => {
  const names = [...new Set(Object.values(toolGroups).flatMap((tools) => tools.map((t) => t.name)))];
  const literal = new RegExp(`(['"\`])(${names.join('|')})\\1`, 'g');
  const found: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const rel = relative(SRC, file);
    if (rel.startsWith('tools/')) continue;
    const code = readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    for (const match of code.matchAll(literal)) found.push(`${rel}: ${match[0]}`);
  }
  expect(found).toEqual([]);
});
