import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LIST_MAX_ENTRIES, listDirTool } from '../../src/tools/fs/list-dir.js';
import type { ToolContext, ToolOutput } from '../../src/tools/types.js';
import { makeToolContext } from '../support/tool-context.js';

let ws: string;
let ctx: ToolContext;

beforeEach(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-list-')));
  ctx = makeToolContext(ws);
});

afterEach(async () => {
  await rm(ws, { recursive: true, force: true });
});

async function list(args: Record<string, unknown>): Promise<ToolOutput> {
  const out = await listDirTool.run(listDirTool.parameters.parse(args), ctx);
  return typeof out === 'string' ? { output: out } : out;
}

async function touch(rel: string, content = ''): Promise<void> {
  await mkdir(path.dirname(path.join(ws, rel)), { recursive: true });
  await writeFile(path.join(ws, rel), content);
}

describe('list_dir', () => {
  it('lists directories first with a slash, then files with sizes', async () => {
    await touch('b.txt', 'x'.repeat(2048));
    await touch('a.txt', 'hi');
    await touch('src/index.ts');
    await mkdir(path.join(ws, 'docs'));
    const r = await list({});
    expect(r.output).toBe('docs/\nsrc/\na.txt (2 B)\nb.txt (2.0 KB)');
  });

  it('descends to the requested depth with indentation', async () => {
    await touch('src/tools/fs/read.ts', 'abc');
    await touch('src/index.ts');
    const r = await list({ path: 'src', depth: 2 });
    expect(r.output).toBe('tools/\n  fs/\nindex.ts (0 B)');
    const deeper = await list({ path: 'src', depth: 3 });
    expect(deeper.output).toBe('tools/\n  fs/\n    read.ts (3 B)\nindex.ts (0 B)');
  });

  it('shows .git and node_modules without descending into them', async () => {
    await touch('.git/HEAD');
    await touch('node_modules/pkg/index.js');
    await touch('lib/a.js');
    const r = await list({ depth: 3 });
    expect(r.output).toBe(
      '.git/ (contents not listed)\nlib/\n  a.js (0 B)\nnode_modules/ (contents not listed)',
    );
  });

  it('shows symlinks with their target and does not follow them', async () => {
    await touch('real/inner.txt');
    await symlink(path.join(ws, 'real'), path.join(ws, 'alias'));
    const r = await list({ depth: 2 });
    expect(r.output).toBe(`real/\n  inner.txt (0 B)\nalias -> ${path.join(ws, 'real')}`);
  });

  it('caps the listing and says how much was left out', async () => {
    for (let i = 0; i < LIST_MAX_ENTRIES + 20; i++) await touch(`f${String(i).padStart(4, '0')}.txt`);
    const r = await list({});
    const lines = r.output.split('\n');
    expect(lines).toHaveLength(LIST_MAX_ENTRIES + 1);
    expect(lines.at(-1)).toBe(
      '[500 entries shown; 20 more not shown. List a subdirectory or use a smaller depth.]',
    );
    expect(r.meta).toMatchObject({ entries: 500, omitted: 20 });
  });

  it('keeps shallow entries when the cap bites at a deeper level', async () => {
    await touch('top.txt');
    for (let i = 0; i < LIST_MAX_ENTRIES; i++) await touch(`big/f${String(i).padStart(4, '0')}`);
    const r = await list({ depth: 2 });
    expect(r.output).toContain('\ntop.txt (0 B)');
    expect(r.output).toMatch(/2 more not shown/);
  });

  it('reports empty directories, files and missing paths', async () => {
    expect((await list({})).output).toBe('. is empty.');
    await touch('file.txt');
    await expect(list({ path: 'file.txt' })).rejects.toThrow('file.txt is a file, not a directory');
    await expect(list({ path: 'nope' })).rejects.toThrow('Directory not found: nope');
  });

  it('refuses directories outside the workspace', async () => {
    await expect(list({ path: '..' })).rejects.toThrow(/outside the workspace/);
    await expect(list({ path: '/' })).rejects.toThrow(/outside the workspace/);
  });

  it('rejects a depth out of range at validation', () => {
    expect(() => listDirTool.parameters.parse({ depth: 4 })).toThrow();
    expect(() => listDirTool.parameters.parse({ depth: 0 })).toThrow();
  });
});
