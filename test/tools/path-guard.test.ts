import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { displayPath, isInside, resolveInWorkspace } from '../../src/tools/path-guard.js';
import { ToolError } from '../../src/tools/types.js';

let base: string;
let ws: string;
let outside: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-guard-')));
  ws = path.join(base, 'ws');
  outside = path.join(base, 'outside');
  await mkdir(path.join(ws, 'src'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(ws, 'src', 'a.ts'), 'a');
  await writeFile(path.join(outside, 'secret.txt'), 'secret');
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('resolveInWorkspace', () => {
  it('resolves relative paths against the workspace', async () => {
    expect(await resolveInWorkspace(ws, 'src/a.ts')).toBe(path.join(ws, 'src', 'a.ts'));
    expect(await resolveInWorkspace(ws, '.')).toBe(ws);
    expect(await resolveInWorkspace(ws, './src/../src/a.ts')).toBe(path.join(ws, 'src', 'a.ts'));
  });

  it('accepts absolute paths inside the workspace', async () => {
    expect(await resolveInWorkspace(ws, path.join(ws, 'src'))).toBe(path.join(ws, 'src'));
  });

  it('rejects .. escapes with a message that says what to do', async () => {
    const err = await resolveInWorkspace(ws, '../x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as Error).message).toBe(
      `Path "../x" is outside the workspace (${ws}). Use a path relative to the workspace root.`,
    );
    await expect(resolveInWorkspace(ws, 'src/../../outside/secret.txt')).rejects.toThrow(
      /outside the workspace/,
    );
  });

  it('rejects absolute paths outside the workspace', async () => {
    await expect(resolveInWorkspace(ws, path.join(outside, 'secret.txt'))).rejects.toThrow(
      /outside the workspace/,
    );
    await expect(resolveInWorkspace(ws, '/etc/passwd')).rejects.toThrow(/outside the workspace/);
  });

  it('does not mistake a sibling with a common prefix for the inside', async () => {
    await mkdir(`${ws}-other`);
    await expect(resolveInWorkspace(ws, `${ws}-other`)).rejects.toThrow(/outside the workspace/);
  });

  it('rejects a symlinked file whose target is outside', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(ws, 'link.txt'));
    await expect(resolveInWorkspace(ws, 'link.txt')).rejects.toThrow(
      new RegExp(`resolves through a symlink to ${escapeRegExp(path.join(outside, 'secret.txt'))}`),
    );
  });

  it('rejects paths through a symlinked directory that leaves, existing or new', async () => {
    await symlink(outside, path.join(ws, 'out'));
    await expect(resolveInWorkspace(ws, 'out')).rejects.toThrow(/symlink/);
    await expect(resolveInWorkspace(ws, 'out/secret.txt')).rejects.toThrow(/symlink/);
    await expect(resolveInWorkspace(ws, 'out/new/deeper/file.txt')).rejects.toThrow(/symlink/);
  });

  it('rejects a dangling symlink whose target would be created outside', async () => {
    await symlink(path.join(outside, 'not-yet.txt'), path.join(ws, 'dangling'));
    await expect(resolveInWorkspace(ws, 'dangling')).rejects.toThrow(/symlink/);
  });

  it('follows symlinks that stay inside and returns the real path', async () => {
    await symlink(path.join(ws, 'src'), path.join(ws, 'alias'));
    expect(await resolveInWorkspace(ws, 'alias/a.ts')).toBe(path.join(ws, 'src', 'a.ts'));
    expect(await resolveInWorkspace(ws, 'alias/new.ts')).toBe(path.join(ws, 'src', 'new.ts'));
  });

  it('accepts the workspace given through a symlinked spelling', async () => {
    const alias = path.join(base, 'ws-alias');
    await symlink(ws, alias);
    expect(await resolveInWorkspace(alias, 'src/a.ts')).toBe(path.join(ws, 'src', 'a.ts'));
    expect(await resolveInWorkspace(alias, path.join(alias, 'src'))).toBe(path.join(ws, 'src'));
  });

  it('resolves paths that do not exist yet unless mustExist is set', async () => {
    expect(await resolveInWorkspace(ws, 'new/dir/file.txt')).toBe(path.join(ws, 'new', 'dir', 'file.txt'));
    await expect(resolveInWorkspace(ws, 'missing.txt', { mustExist: true })).rejects.toThrow(
      'Path "missing.txt" does not exist.',
    );
    await expect(resolveInWorkspace(ws, 'src/a.ts', { mustExist: true })).resolves.toBe(
      path.join(ws, 'src', 'a.ts'),
    );
  });

  it('reports symlink loops and empty paths', async () => {
    await symlink(path.join(ws, 'loop-b'), path.join(ws, 'loop-a'));
    await symlink(path.join(ws, 'loop-a'), path.join(ws, 'loop-b'));
    await expect(resolveInWorkspace(ws, 'loop-a')).rejects.toThrow(/symlink loop/);
    await expect(resolveInWorkspace(ws, '  ')).rejects.toThrow(/empty/);
  });
});

describe('displayPath', () => {
  it('gives workspace-relative paths and . for the root', () => {
    expect(displayPath(ws, ws)).toBe('.');
    expect(displayPath(ws, path.join(ws, 'src', 'a.ts'))).toBe('src/a.ts');
  });
});

describe('isInside', () => {
  it('treats names starting with .. as inside', () => {
    expect(isInside('/ws', '/ws/..hidden')).toBe(true);
    expect(isInside('/ws', '/ws')).toBe(true);
    expect(isInside('/ws', '/')).toBe(false);
    expect(isInside('/ws', '/wsx')).toBe(false);
  });
});

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('protected paths for writing', () => {
  it.each(['.git/hooks/pre-commit', '.git/config', '.hearth/config.json', '.bashrc', './.hearth'])(
    'refuses to write %s',
    async (p) => {
      await expect(resolveInWorkspace(ws, p, { forWriting: true })).rejects.toThrow(/is protected/);
      await expect(resolveInWorkspace(ws, p)).resolves.toBe(path.join(ws, p));
    },
  );

  it('allows ordinary files that merely look alike', async () => {
    for (const p of ['src/.git-notes', 'docs/.hearth.md', 'sub/.bashrc', '.gitignore']) {
      await expect(resolveInWorkspace(ws, p, { forWriting: true })).resolves.toBe(path.join(ws, p));
    }
  });
});
