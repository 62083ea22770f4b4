import { mkdtemp, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirTool } from '../../src/tools/fs/mkdir.js';
import type { ToolContext, ToolOutput } from '../../src/tools/types.js';
import { makeToolContext } from '../support/tool-context.js';

let ws: string;
let ctx: ToolContext;

beforeEach(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-mkdir-')));
  ctx = makeToolContext(ws);
});

afterEach(async () => {
  await rm(ws, { recursive: true, force: true });
});

async function mkdir(args: Record<string, unknown>): Promise<ToolOutput> {
  const out = await mkdirTool.run(mkdirTool.parameters.parse(args), ctx);
  return typeof out === 'string' ? { output: out } : out;
}

const isDir = (p: string) => stat(path.join(ws, p)).then((s) => s.isDirectory());

describe('mkdir', () => {
  it('creates a directory with its missing parents', async () => {
    const r = await mkdir({ path: 'a/b/c' });
    expect(r.output).toBe('Created a/b/c/');
    expect(r.meta).toEqual({ path: 'a/b/c', created: true });
    expect(await isDir('a/b/c')).toBe(true);
  });

  it('says when the directory already exists', async () => {
    await mkdir({ path: 'src' });
    const r = await mkdir({ path: './src/' });
    expect(r.output).toBe('Already exists: src/');
    expect(r.meta).toMatchObject({ created: false });
    expect((await mkdir({ path: '.' })).output).toBe('Already exists: ./');
  });

  it('refuses when a file is in the way, naming it', async () => {
    await writeFile(path.join(ws, 'notes'), 'x');
    await expect(mkdir({ path: 'notes' })).rejects.toThrow(
      'Cannot create notes: notes is a file, not a directory.',
    );
    await expect(mkdir({ path: 'notes/deeper/still' })).rejects.toThrow(
      'Cannot create notes/deeper/still: notes is a file, not a directory.',
    );
  });

  it('refuses paths outside the workspace, including through symlinks', async () => {
    const outside = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-mkdir-out-')));
    try {
      await symlink(outside, path.join(ws, 'out'));
      await expect(mkdir({ path: '../escape' })).rejects.toThrow(/outside the workspace/);
      await expect(mkdir({ path: 'out/made' })).rejects.toThrow(/symlink/);
      await expect(stat(path.join(outside, 'made'))).rejects.toThrow();
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('is a mutating tool', () => {
    expect(mkdirTool.mutates).toBe(true);
    expect(() => mkdirTool.parameters.parse({})).toThrow();
  });
});
