import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { editFileTool } from '../../src/tools/edit/edit-file.js';
import { readFileTool } from '../../src/tools/fs/read-file.js';
import { writeFileTool } from '../../src/tools/fs/write-file.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { defineTool, type ToolContext } from '../../src/tools/types.js';
import { makeToolContext } from '../support/tool-context.js';

let ws: string;
let ctx: ToolContext;
const echo = defineTool({
  name: 'echo_file',
  description: 'Echoes its arguments.',
  // Declares `file` itself: that name is its own, not an alias of `path`.
  parameters: z.object({ path: z.string().optional(), file: z.string().optional() }),
  mutates: false,
  run: async (args) => JSON.stringify(args),
});
const registry = new ToolRegistry([readFileTool, writeFileTool, editFileTool, echo]);

beforeEach(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-alias-')));
  ctx = makeToolContext(ws);
});
afterEach(async () => {
  await rm(ws, { recursive: true, force: true });
});

const call = (name: string, args: object) =>
  registry.execute({ id: 'c1', name, arguments: JSON.stringify(args) }, ctx);

describe('argument names other agents use', () => {
  it("takes Claude Code's file_path and the str_replace editor's old_str/new_str for edit_file", async () => {
    await writeFile(path.join(ws, 'a.txt'), 'hello world\n');
    const result = await call('edit_file', { file_path: 'a.txt', old_str: 'world', new_str: 'there' });
    expect(result.ok, result.output).toBe(true);
    expect(await readFile(path.join(ws, 'a.txt'), 'utf8')).toBe('hello there\n');
  });

  it("takes opencode's filePath/oldString/newString and the editor's file_text", async () => {
    expect((await call('write_file', { filePath: 'b.txt', file_text: 'one\n' })).ok).toBe(true);
    const edited = await call('edit_file', { filePath: 'b.txt', oldString: 'one', newString: 'two' });
    expect(edited.ok, edited.output).toBe(true);
    expect(await readFile(path.join(ws, 'b.txt'), 'utf8')).toBe('two\n');
  });

  it('leaves an ambiguous call for validation to explain', async () => {
    await writeFile(path.join(ws, 'c.txt'), 'x\n');
    const result = await call('read_file', { file_path: 'c.txt', filename: 'c.txt' });
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/Give exactly one of path/);
  });

  it('prefers the real name when both are given', async () => {
    await writeFile(path.join(ws, 'd.txt'), 'real\n');
    const result = await call('read_file', { path: 'd.txt', file_path: 'nowhere.txt' });
    expect(result.ok, result.output).toBe(true);
    expect(result.output).toContain('real');
  });

  it('never renames an argument a tool declares as its own', async () => {
    const result = await call('echo_file', { file: 'x' });
    expect(JSON.parse(result.output)).toEqual({ file: 'x' });
  });
});

describe('calls that must not run', () => {
  it('answers a cut-off call with its problem instead of running it', async () => {
    const result = await registry.execute(
      { id: 'c2', name: 'write_file', arguments: '{}', problem: 'Your write_file call was cut off.' },
      ctx,
    );
    expect(result).toMatchObject({ ok: false, output: 'Your write_file call was cut off.' });
  });

  it('still names an unknown tool first, with the closest real one', async () => {
    const result = await registry.execute(
      { id: 'c3', name: 'write_fil', arguments: '{}', problem: 'cut' },
      ctx,
    );
    expect(result.output).toMatch(/Unknown tool "write_fil". Did you mean "write_file"\?/);
  });
});
