import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

type Folder = { path: string; entries: Array<{ name: string; kind: string; size?: number }> };

describe("a session's workspace, read-only", () => {
  it('lists a folder at a time without what .gitignore leaves out, .git or secret files', async () => {
    gw = await startGateway();
    const ws = gw.workspace;
    await mkdir(join(ws, '.git', 'info'), { recursive: true });
    await writeFile(join(ws, '.git', 'info', 'exclude'), 'scratch.txt\n');
    await writeFile(join(ws, '.gitignore'), 'build/\n*.log\n');
    await mkdir(join(ws, 'build'));
    await mkdir(join(ws, 'src', 'gen'), { recursive: true });
    await writeFile(join(ws, 'src', '.gitignore'), 'gen/\n!keep.log\n');
    await writeFile(join(ws, 'src', 'main.ts'), 'export {};\n');
    await writeFile(join(ws, 'src', 'keep.log'), 'kept\n');
    await writeFile(join(ws, 'src', 'drop.log'), 'dropped\n');
    await writeFile(join(ws, 'app.log'), 'x');
    await writeFile(join(ws, 'scratch.txt'), 'x');
    await writeFile(join(ws, '.env'), 'TOKEN=1\n');
    await writeFile(join(ws, 'README.md'), '# hi\n');
    await gw.json('/api/sessions', { id: 'f1' });

    const top = await gw.json<Folder>('/api/sessions/f1/files');
    expect(top.entries.map((e) => `${e.kind}:${e.name}`)).toEqual([
      'dir:src',
      'file:.gitignore',
      'file:README.md',
    ]);
    expect(top.entries.find((e) => e.name === 'README.md')!.size).toBe(5);
    const src = await gw.json<Folder>('/api/sessions/f1/files?path=src');
    expect(src.entries.map((e) => e.name)).toEqual(['.gitignore', 'keep.log', 'main.ts']);
  });

  it('shows a text file, and refuses secrets, binaries and paths out of the workspace', async () => {
    gw = await startGateway();
    const ws = gw.workspace;
    await writeFile(join(ws, 'notes.md'), 'line one\nline two\n');
    await writeFile(join(ws, '.env'), 'TOKEN=1\n');
    await writeFile(join(ws, 'blob.bin'), Buffer.from([1, 0, 2, 3]));
    await writeFile(join(gw.dir, 'outside.txt'), 'not yours\n');
    await symlink(join(gw.dir, 'outside.txt'), join(ws, 'link.txt'));
    await gw.json('/api/sessions', { id: 'f2' });

    expect(await gw.json('/api/sessions/f2/files/content?path=notes.md')).toEqual({
      path: 'notes.md',
      content: 'line one\nline two\n',
      size: 18,
      truncated: false,
    });
    const refused = async (path: string) => {
      const response = await gw!.http(`/api/sessions/f2/files/content?path=${encodeURIComponent(path)}`);
      return { status: response.status, detail: ((await response.json()) as { detail: string }).detail };
    };
    expect(await refused('.env')).toMatchObject({ status: 403, detail: expect.stringContaining('secrets') });
    expect(await refused('blob.bin')).toMatchObject({
      status: 415,
      detail: expect.stringContaining('binary'),
    });
    expect(await refused('link.txt')).toMatchObject({
      status: 403,
      detail: expect.stringContaining('out of the workspace'),
    });
    expect(await refused('../outside.txt')).toMatchObject({ status: 400 });
    expect(await refused('missing.txt')).toMatchObject({ status: 404 });
  });
});
