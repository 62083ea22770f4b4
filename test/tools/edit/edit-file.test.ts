import {
  chmod,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editFileTool } from '../../../src/tools/edit/edit-file.js';
import { multiEditTool } from '../../../src/tools/edit/multi-edit.js';
import { type ToolContext, ToolError, type ToolOutput } from '../../../src/tools/types.js';
import { makeToolContext } from '../../support/tool-context.js';

let root: string;
let workspace: string;
let ctx: ToolContext;

beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'hearth-edit-')));
  workspace = path.join(root, 'ws');
  await mkdir(workspace);
  ctx = makeToolContext(workspace);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const put = (name: string, content: string | Uint8Array) => writeFile(path.join(workspace, name), content);
const bytesOf = (name: string) => readFile(path.join(workspace, name));
const textOf = async (name: string) => (await bytesOf(name)).toString('utf8');

async function edit(args: Record<string, unknown>): Promise<ToolOutput> {
  const out = await editFileTool.run(editFileTool.parameters.parse(args), ctx);
  return typeof out === 'string' ? { output: out } : out;
}

async function multi(args: Record<string, unknown>): Promise<ToolOutput> {
  const out = await multiEditTool.run(multiEditTool.parameters.parse(args), ctx);
  return typeof out === 'string' ? { output: out } : out;
}

async function editError(args: Record<string, unknown>, run = edit): Promise<string> {
  const err = await run(args).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return (err as ToolError).message;
}

describe('edit_file', () => {
  it('reports the strategy, the line and a unified diff', async () => {
    await put('a.ts', 'const a = 1;\nconst b = 2;\n');
    const out = await edit({ path: 'a.ts', old_string: 'const b = 2;', new_string: 'const b = 3;' });
    expect(out.output).toBe(
      [
        'Edited a.ts (strategy: exact, line 2)',
        '--- a/a.ts',
        '+++ b/a.ts',
        '@@ -1,2 +1,2 @@',
        ' const a = 1;',
        '-const b = 2;',
        '+const b = 3;',
      ].join('\n'),
    );
    expect(out.meta).toMatchObject({ path: 'a.ts', strategy: 'exact', line: 2, added: 1, removed: 1 });
    expect(await textOf('a.ts')).toBe('const a = 1;\nconst b = 3;\n');
  });

  it('keeps CRLF line endings, also for lines it adds', async () => {
    await put('win.txt', 'one\r\n    two\r\nthree\r\n');
    const out = await edit({ path: 'win.txt', old_string: 'two\r\nthree', new_string: 'two\nthree\nfour' });
    expect(out.output).toMatch(/^Edited win.txt/);
    expect(await textOf('win.txt')).toBe('one\r\n    two\r\nthree\r\nfour\r\n');
  });

  it('keeps a byte-order mark', async () => {
    await put('bom.csv', '\uFEFFa,b\n1,2\n');
    await edit({ path: 'bom.csv', old_string: '1,2', new_string: '3,4' });
    const raw = await bytesOf('bom.csv');
    expect([...raw.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(raw.subarray(3).toString('utf8')).toBe('a,b\n3,4\n');
  });

  it('keeps a missing final newline missing', async () => {
    await put('n.txt', 'a\nb');
    await edit({ path: 'n.txt', old_string: 'b\n', new_string: 'c\nd\n' });
    expect(await textOf('n.txt')).toBe('a\nc\nd');
  });

  it('keeps the permission bits and leaves no temp file behind', async () => {
    await put('run.sh', '#!/bin/sh\necho hi\n');
    await chmod(path.join(workspace, 'run.sh'), 0o755);
    await edit({ path: 'run.sh', old_string: 'echo hi', new_string: 'echo bye' });
    expect((await stat(path.join(workspace, 'run.sh'))).mode & 0o777).toBe(0o755);
    expect(await readdir(workspace)).toEqual(['run.sh']);
  });

  it('refuses binary files without touching them (other encodings: test/tools/encodings.test.ts)', async () => {
    const binary = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0x0d, 0x0a]);
    await put('img.png', binary);
    expect(await editError({ path: 'img.png', old_string: 'PNG', new_string: 'GIF' })).toMatch(/binary/);
    expect([...(await bytesOf('img.png'))]).toEqual([...binary]);
  });

  it('refuses paths outside the workspace, directly or through a symlink', async () => {
    await writeFile(path.join(root, 'outside.txt'), 'secret\n');
    await symlink(path.join(root, 'outside.txt'), path.join(workspace, 'link.txt'));
    for (const p of ['../outside.txt', path.join(root, 'outside.txt'), 'link.txt']) {
      expect(await editError({ path: p, old_string: 'secret', new_string: 'public' })).toMatch(
        /outside the workspace/,
      );
    }
    expect(await readFile(path.join(root, 'outside.txt'), 'utf8')).toBe('secret\n');
  });

  it('points to write_file for a file that does not exist', async () => {
    expect(await editError({ path: 'new.ts', old_string: 'a', new_string: 'b' })).toMatch(
      /new\.ts does not exist.*write_file/,
    );
  });

  it('refuses a directory', async () => {
    await mkdir(path.join(workspace, 'src'));
    expect(await editError({ path: 'src', old_string: 'a', new_string: 'b' })).toMatch(/is a directory/);
  });

  it('refuses an ambiguous edit and leaves the file alone', async () => {
    await put('dup.py', 'x = 1\ny = 2\nx = 1\n');
    const message = await editError({ path: 'dup.py', old_string: 'x = 1', new_string: 'x = 9' });
    expect(message).toContain('Cannot edit dup.py: old_string matches 2 places (lines 1, 3)');
    expect(await textOf('dup.py')).toBe('x = 1\ny = 2\nx = 1\n');
  });

  it('replaces every occurrence with replace_all, also sent as a string', async () => {
    await put('dup.py', 'x = 1\ny = 2\nx = 1\n');
    const out = await edit({ path: 'dup.py', old_string: 'x = 1', new_string: 'x = 9', replace_all: 'true' });
    expect(out.output).toMatch(/^Edited dup.py \(strategy: exact, line 1, 2 replacements\)/);
    expect(await textOf('dup.py')).toBe('x = 9\ny = 2\nx = 9\n');
  });

  it('explains a stale old_string with the closest region', async () => {
    await put('s.js', 'function f() {\n  return compute(1);\n}\n');
    const message = await editError({
      path: 's.js',
      old_string: '  return compute(2);',
      new_string: '  return 0;',
    });
    expect(message).toContain('closest text is at line 2');
    expect(message).toContain('+   return compute(1);   (line 2)');
    expect(await textOf('s.js')).toBe('function f() {\n  return compute(1);\n}\n');
  });

  it('suggests write_file after repeated failures on a small file, and forgets them after a success', async () => {
    await put('small.txt', 'alpha\nbeta\n');
    const bad = { path: 'small.txt', old_string: 'gamma', new_string: 'delta' };
    expect(await editError(bad)).not.toMatch(/write_file/);
    expect(await editError(bad)).toMatch(/failed edit 2 in a row on small.txt.*write_file/s);
    const badMulti = { path: 'small.txt', edits: [{ old_string: 'gamma', new_string: 'delta' }] };
    expect(await editError(badMulti, multi)).toMatch(/failed edit 3 in a row/);

    await edit({ path: 'small.txt', old_string: 'beta', new_string: 'BETA' });
    expect(await editError(bad)).not.toMatch(/write_file/);
  });

  it('does not suggest rewriting a large file', async () => {
    await put('big.txt', Array.from({ length: 500 }, (_, i) => `row ${i}`).join('\n'));
    const bad = { path: 'big.txt', old_string: 'nope', new_string: 'x' };
    await editError(bad);
    expect(await editError(bad)).not.toMatch(/write_file/);
  });

  it('caps the diff shown to the model but gives the whole diff to the display', async () => {
    const body = Array.from({ length: 300 }, (_, i) => `v${i}`).join('\n');
    await put('long.txt', `start\n${body}\n`);
    const out = await edit({ path: 'long.txt', old_string: body, new_string: body.replace(/v/g, 'w') });
    expect(out.output).toMatch(/\[diff truncated: \d+ more lines; read the file to see the rest\]$/);
    expect(out.display?.split('\n').filter((l) => l.startsWith('+w')).length).toBe(300);
  });
});

describe('multi_edit', () => {
  const file = 'import a from "a";\n\nexport function f() {\n  return a(1);\n}\n';

  it('applies edits in order and returns one diff', async () => {
    await put('m.ts', file);
    const out = await multi({
      path: 'm.ts',
      edits: [
        { old_string: 'import a from "a";', new_string: 'import a from "a";\nimport b from "b";' },
        { old_string: 'return a(1);', new_string: 'return b(a(1));' },
        { old_string: 'import b from "b";', new_string: 'import b from "./b";' },
      ],
    });
    expect(out.output.split('\n')[0]).toBe(
      'Edited m.ts (3 edits: #1 exact line 1, #2 exact line 5, #3 exact line 2)',
    );
    expect(out.output.match(/^@@/gm)).toHaveLength(1);
    expect(await textOf('m.ts')).toBe(
      'import a from "a";\nimport b from "./b";\n\nexport function f() {\n  return b(a(1));\n}\n',
    );
  });

  it('writes nothing when a later edit fails, and says which one', async () => {
    await put('m.ts', file);
    const message = await editError(
      {
        path: 'm.ts',
        edits: [
          { old_string: 'return a(1);', new_string: 'return a(2);' },
          { old_string: 'return a(3);', new_string: 'return a(4);' },
        ],
      },
      multi,
    );
    expect(message).toMatch(/edits\[1\] \(edit 2 of 2\) failed, so no edit was applied/);
    expect(await textOf('m.ts')).toBe(file);
    expect(await readdir(workspace)).toEqual(['m.ts']);
  });

  it('explains when an earlier edit changed the text a later one quotes', async () => {
    await put('m.ts', file);
    const message = await editError(
      {
        path: 'm.ts',
        edits: [
          { old_string: 'return a(1);', new_string: 'return a(2);' },
          { old_string: 'return a(1);', new_string: 'return a(3);' },
        ],
      },
      multi,
    );
    expect(message).toMatch(/an earlier edit in this call changed that text/);
    expect(await textOf('m.ts')).toBe(file);
  });

  it('accepts the edits array sent as a JSON string', async () => {
    await put('m.ts', file);
    const edits = JSON.stringify([{ old_string: 'a(1)', new_string: 'a(5)' }]);
    await multi({ path: 'm.ts', edits });
    expect(await textOf('m.ts')).toContain('return a(5);');
  });

  it('keeps CRLF endings across several edits', async () => {
    await put('w.txt', 'a\r\nb\r\nc\r\n');
    await multi({
      path: 'w.txt',
      edits: [
        { old_string: 'a', new_string: 'A' },
        { old_string: 'c\n', new_string: 'C\nD\n' },
      ],
    });
    expect(await textOf('w.txt')).toBe('A\r\nb\r\nC\r\nD\r\n');
  });
});
