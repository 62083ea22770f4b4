import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { blocks, checkText, qualityFindings } from '../../src/pipeline/quality-gate.js';

const found = (file: string, text: string) => checkText(file, text).map((f) => `${f.severity} ${f.message}`);

describe('the quality gate checks', () => {
  it.each([
    ['a.py', 'def f():\n    # TODO: implement\n    pass\n', /major a\.py:2: placeholder left/],
    ['a.py', 'def f(x) -> int:\n    """Doc."""\n    pass\n', /major a\.py:1: the body is only `pass`/],
    ['a.py', 'def f():\n    ...\n', /major a\.py:1: the body is only `\.\.\.`/],
    ['a.py', 'def f():\n    raise NotImplementedError\n', /major a\.py:2: not implemented/],
    ['a.py', 'def f(x):\n    return 0\n', /minor a\.py:1: a stub returning a constant/],
    ['a.js', 'function f(x) { return null; }\n', /minor a\.js:1: a stub returning a constant/],
    [
      'a.ts',
      "export function f() {\n  throw new Error('Not implemented');\n}\n",
      /major a\.ts:2: not implemented/,
    ],
    ['a.js', 'function f() {}\n', /major a\.js:1: an empty function body/],
    ['a.js', '// const x = load();\n// x.run();\n// return x;\nok();\n', /minor a\.js:1: commented-out code/],
  ])('%s: %j', (file, text, expected) => {
    expect(found(file, text).join('\n')).toMatch(expected);
  });

  it('says nothing of finished code, prose comments or a function with a real body', () => {
    const py =
      'def add(a, b):\n    """Adds."""\n    total = a + b\n    return total\n\n# The sum of two numbers.\n';
    expect(found('a.py', py)).toEqual([]);
    const js = '// Why: the server counts from one.\nexport function next(n) {\n  return n + 1;\n}\n';
    expect(found('a.js', js)).toEqual([]);
  });

  it('reads only code files inside the workspace, and blocks on a major finding in block mode only', async () => {
    const ws = await mkdtemp(path.join(os.tmpdir(), 'gate-'));
    try {
      await writeFile(path.join(ws, 'a.py'), 'def f():\n    pass\n');
      await writeFile(path.join(ws, 'notes.md'), 'TODO: implement everything\n');
      await writeFile(path.join(ws, 'b.py'), 'def g():\n    return 1\n');
      const findings = await qualityFindings(ws, ['a.py', 'notes.md', '../outside.py', 'missing.py']);
      expect(findings.map((f) => f.file)).toEqual(['a.py']);
      expect(blocks('block', findings)).toBe(true);
      expect(blocks('warn', findings)).toBe(false);
      expect(blocks('block', await qualityFindings(ws, ['b.py']))).toBe(false);
    } finally {
      await rm(ws, { recursive: true, force: true });
    }
  });
});
