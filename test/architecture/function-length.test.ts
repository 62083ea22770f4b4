/**
 * Keeps src/agent/ readable (issue 36): no function there over 100 lines, no file over 400. Every
 * function counts on its own, nested ones included (a generator closure inside the loop is a
 * function too); its lines run from its first to its last, as an editor shows them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const AGENT = join(ROOT, 'src', 'agent');
const MAX_FUNCTION_LINES = 100;
const MAX_FILE_LINES = 400;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Each function-like node with a body in `text`: where it is and how many lines it spans. */
function functionLengths(file: string, text: string): Array<{ name: string; lines: number }> {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Array<{ name: string; lines: number }> = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const named = 'name' in node && node.name ? node.name.getText(source) : '(anonymous)';
      found.push({ name: `${named} at line ${first + 1}`, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('src/agent/ stays small', () => {
  const files = sourceFiles(AGENT);

  it('finds the folder and counts nested functions', () => {
    expect(files.length).toBeGreaterThan(5);
    const nested = functionLengths(
      'x.ts',
      'function outer() {\n  async function* inner() {\n    yield 1;\n  }\n  return inner;\n}\n',
    );
    expect(nested).toEqual([
      { name: 'outer at line 1', lines: 6 },
      { name: 'inner at line 2', lines: 3 },
    ]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    const long = files.flatMap((file) =>
      functionLengths(file, readFileSync(file, 'utf8'))
        .filter((f) => f.lines > MAX_FUNCTION_LINES)
        .map((f) => `${relative(ROOT, file)}: ${f.name} (${f.lines} lines)`),
    );
    expect(long).toEqual([]);
  });

  it(`has no file over ${MAX_FILE_LINES} lines`, () => {
    const long = files
      .map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter((f) => f.lines > MAX_FILE_LINES)
      .map((f) => `${relative(ROOT, f.file)} (${f.lines} lines)`);
    expect(long).toEqual([]);
  });
});
