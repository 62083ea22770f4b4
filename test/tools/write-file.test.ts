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
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileTool } from '../../src/tools/fs/write-file.js';
import type { ToolContext, ToolOutput } from '../../src/tools/types.js';
import { makeToolContext } from '../support/tool-context.js';

let base: string;
let ws: string;
let outside: string;
let ctx: ToolContext;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-write-')));
  ws = path.join(base, 'ws');
  outside = path.join(base, 'outside');
  await mkdir(ws);
  await mkdir(outside);
  ctx = makeToolContext(ws);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

async function write(args: Record<string, unknown>): Promise<ToolOutput> {
  const out = await writeFileTool.run(writeFileTool.parameters.parse(args), ctx);
  return typeof out === 'string' ? { output: out } : out;
}

describe('write_file', () => {
  it('creates a file and its parent directories', async () => {
    const r = await write({ path: 'a/b/c.txt', content: 'one\ntwo\n' });
    expect(r.output).toBe('Created a/b/c.txt: wrote 2 lines (8 bytes).');
    expect(r.meta).toMatchObject({ created: true, lines: 2, bytes: 8 });
    expect(await readFile(path.join(ws, 'a', 'b', 'c.txt'), 'utf8')).toBe('one\ntwo\n');
  });

  it('says when it overwrote, counts UTF-8 bytes and leaves no temp files behind', async () => {
    await writeFile(path.join(ws, 'x.txt'), 'old');
    const r = await write({ path: 'x.txt', content: 'é' });
    expect(r.output).toBe('Overwrote x.txt: wrote 1 line (2 bytes).');
    expect(await readFile(path.join(ws, 'x.txt'), 'utf8')).toBe('é');
    expect(await readdir(ws)).toEqual(['x.txt']);
  });

  it("removes the temp file a killed process left beside the file, and keeps a live process's", async () => {
    // Process ids far above pid_max (at most 2^22 on Linux) belong to no process.
    const dead = '.x.txt.99999999.0a1b2c3d.tmp';
    const live = `.x.txt.${process.pid}.0a1b2c3d.tmp`;
    await writeFile(path.join(ws, dead), 'half');
    await writeFile(path.join(ws, live), 'being written');
    await writeFile(path.join(ws, '.x.txt.notes.tmp'), 'not ours');
    await write({ path: 'x.txt', content: 'done' });
    expect((await readdir(ws)).sort()).toEqual(['.x.txt.notes.tmp', live, 'x.txt'].sort());
  });

  it('writes empty content', async () => {
    const r = await write({ path: 'empty', content: '' });
    expect(r.output).toBe('Created empty: wrote 0 lines (0 bytes).');
  });

  it('keeps the permission bits of the file it replaces', async () => {
    const script = path.join(ws, 'run.sh');
    await writeFile(script, '#!/bin/sh\n');
    await chmod(script, 0o755);
    await write({ path: 'run.sh', content: '#!/bin/sh\necho hi\n' });
    expect((await stat(script)).mode & 0o777).toBe(0o755);
  });

  it('writes through a symlink inside the workspace to its real target', async () => {
    await writeFile(path.join(ws, 'real.txt'), 'old');
    await symlink(path.join(ws, 'real.txt'), path.join(ws, 'alias.txt'));
    const r = await write({ path: 'alias.txt', content: 'new' });
    expect(r.output).toBe('Overwrote real.txt: wrote 1 line (3 bytes).');
    expect(await readFile(path.join(ws, 'real.txt'), 'utf8')).toBe('new');
  });

  it('refuses to write outside the workspace', async () => {
    await expect(write({ path: '../outside/x.txt', content: 'x' })).rejects.toThrow(/outside the workspace/);
    await expect(write({ path: path.join(outside, 'x.txt'), content: 'x' })).rejects.toThrow(
      /outside the workspace/,
    );
    expect(await readdir(outside)).toEqual([]);
  });

  it('refuses a new file under a symlinked directory that leaves the workspace', async () => {
    await symlink(outside, path.join(ws, 'out'));
    await expect(write({ path: 'out/sub/new.txt', content: 'x' })).rejects.toThrow(/symlink/);
    expect(await readdir(outside)).toEqual([]);
  });

  it('refuses directories and paths through files', async () => {
    await mkdir(path.join(ws, 'dir'));
    await expect(write({ path: 'dir', content: 'x' })).rejects.toThrow('dir is a directory');
    await writeFile(path.join(ws, 'file'), '');
    await expect(write({ path: 'file/child.txt', content: 'x' })).rejects.toThrow(/existing file/);
  });
});
