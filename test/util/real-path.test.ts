import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realpathLoose } from '../../src/util/real-path.js';

describe('realpathLoose', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'hearth-realpath-')));
    await mkdir(join(dir, 'real'));
    await writeFile(join(dir, 'real', 'file.txt'), 'x');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('resolves an existing path through a linked folder', async () => {
    await symlink(join(dir, 'real'), join(dir, 'view'));
    expect(await realpathLoose(join(dir, 'view', 'file.txt'))).toEqual({
      ok: true,
      real: join(dir, 'real', 'file.txt'),
      exists: true,
    });
  });

  it('resolves the existing part of a missing path and keeps the rest', async () => {
    await symlink(join(dir, 'real'), join(dir, 'view'));
    expect(await realpathLoose(join(dir, 'view', 'new', 'a.txt'))).toEqual({
      ok: true,
      real: join(dir, 'real', 'new', 'a.txt'),
      exists: false,
    });
  });

  it('follows a dangling link to the file a write through it would create', async () => {
    await symlink(join(dir, 'real', 'made.txt'), join(dir, 'alias.txt'));
    expect(await realpathLoose(join(dir, 'alias.txt'))).toEqual({
      ok: true,
      real: join(dir, 'real', 'made.txt'),
      exists: false,
    });
  });

  it('reports a symlink loop', async () => {
    await symlink(join(dir, 'b'), join(dir, 'a'));
    await symlink(join(dir, 'a'), join(dir, 'b'));
    expect(await realpathLoose(join(dir, 'a'))).toMatchObject({ ok: false, loop: true });
  });
});
