import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PermissionGate } from '../../src/permissions/gate.js';
import type { PermissionMode } from '../../src/permissions/modes.js';
import { parseRule } from '../../src/permissions/rules.js';
import { editFileTool } from '../../src/tools/edit/edit-file.js';
import { listDirTool } from '../../src/tools/fs/list-dir.js';
import { readFileTool } from '../../src/tools/fs/read-file.js';
import { writeFileTool } from '../../src/tools/fs/write-file.js';
import { type AnyTool, MemoryState } from '../../src/tools/types.js';

// Issue 12, class 5: secret-file and path rules are decided on the file a path leads to, not
// only on its name. Every link here is a real symlink in a real temporary workspace.
let root: string;
let ws: string;
let outside: string;

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'hearth-links-')));
  ws = join(root, 'ws');
  outside = join(root, 'outside');
  await mkdir(ws);
  await mkdir(outside);
  await writeFile(join(outside, 'server.pem'), 'KEY');
  await writeFile(join(ws, '.env'), 'TOKEN=1\n');
  await writeFile(join(ws, 'notes.txt'), 'plain\n');
  await mkdir(join(ws, 'protected'));
  await writeFile(join(ws, 'protected', 'plan.txt'), 'secret plan\n');
  await mkdir(join(ws, '.aws'));
  await writeFile(join(ws, '.aws', 'credentials'), '[default]\n');
  await mkdir(join(ws, 'sub'));

  await symlink('.env', join(ws, 'alias.txt')); // relative target
  await symlink(join(ws, '.env'), join(ws, 'absolute.txt')); // absolute target inside
  await symlink('alias.txt', join(ws, 'chained.txt')); // link to a link
  await symlink('../.env', join(ws, 'sub', 'up.txt')); // relative target with ..
  await symlink('protected', join(ws, 'view')); // symlinked directory
  await symlink('.aws', join(ws, 'cloud')); // symlinked directory to a secret's folder
  await symlink('.env.production', join(ws, 'dangling.txt')); // target not there yet
  await symlink('protected/new.txt', join(ws, 'drop.txt')); // dangling, into a denied folder
  await symlink(join(outside, 'server.pem'), join(ws, 'cert.txt')); // leaves the workspace
  await symlink('notes.txt', join(ws, 'plain-link.txt')); // harmless alias
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function gate(mode: PermissionMode, allow: string[] = [], deny: string[] = []) {
  return new PermissionGate(mode, { allow: allow.map(parseRule), deny: deny.map(parseRule) }, ws);
}

const args = (tool: AnyTool, raw: Record<string, unknown>) => tool.parameters.parse(raw);
const read = (path: string) => [readFileTool, args(readFileTool, { path })] as const;
const edit = (path: string) =>
  [editFileTool, args(editFileTool, { path, old_string: 'a', new_string: 'b' })] as const;
const write = (path: string) => [writeFileTool, args(writeFileTool, { path, content: 'x' })] as const;

describe('a secret reached through a symlink still asks, whatever the mode', () => {
  it.each([
    ['relative link', () => read('alias.txt'), '.env'],
    ['absolute link', () => read('absolute.txt'), '.env'],
    ['chained links', () => read('chained.txt'), '.env'],
    ['link with ..', () => read('sub/up.txt'), '.env'],
    ['symlinked directory', () => read('cloud/credentials'), '.aws/credentials'],
    ['edit through a link', () => edit('alias.txt'), '.env'],
    ['write through a dangling link', () => write('dangling.txt'), '.env.production'],
    ['absolute path argument', () => read(join(ws, 'alias.txt')), '.env'],
  ])('%s', async (_name, make, target) => {
    const [tool, callArgs] = make();
    const g = gate('auto');
    const verdict = await g.check(tool, callArgs, new MemoryState());
    expect(verdict).toMatchObject({ action: 'ask', reason: expect.stringContaining(target) });
    expect(await g.summary(tool, callArgs)).toContain(`→ ${target}`);
  });

  it('a link out of the workspace to a key asks too', async () => {
    const verdict = await gate('auto').check(...read('cert.txt'), new MemoryState());
    expect(verdict).toMatchObject({
      action: 'ask',
      reason: expect.stringContaining(join(outside, 'server.pem')),
    });
  });

  it('a harmless link runs as the file itself would', async () => {
    expect(await gate('auto').check(...read('plain-link.txt'), new MemoryState())).toEqual({
      action: 'allow',
    });
    expect(await gate('normal').check(...read('plain-link.txt'), new MemoryState())).toEqual({
      action: 'allow',
    });
  });

  it('a bare allow rule does not pre-approve the secret behind a link; a rule naming it does', async () => {
    const state = new MemoryState();
    expect((await gate('normal', ['read_file']).check(...read('alias.txt'), state)).action).toBe('ask');
    expect((await gate('normal', ['read_file(*.txt)']).check(...read('alias.txt'), state)).action).toBe(
      'ask',
    );
    expect((await gate('normal', ['read_file(.env)']).check(...read('alias.txt'), state)).action).toBe(
      'allow',
    );
  });
});

describe('deny rules match the name or the file it leads to', () => {
  const deny = ['read_file(protected/**)', 'write_file(protected/**)', 'edit_file(protected/**)'];
  it.each([
    ['through a symlinked directory', () => read('view/plan.txt')],
    ['through a symlinked directory, absolute', () => read(join(ws, 'view', 'plan.txt'))],
    ['listing a symlinked directory', () => [listDirTool, args(listDirTool, { path: 'view' })] as const],
    ['writing through a dangling link', () => write('drop.txt')],
    ['editing through a symlinked directory', () => edit('view/plan.txt')],
    ['the protected file by its own name', () => read('protected/plan.txt')],
  ])('%s', async (_name, make) => {
    const [tool, callArgs] = make();
    const denyAlso = [...deny, 'list_dir(protected)'];
    const verdict = await gate('auto', ['read_file', 'write_file', 'edit_file'], denyAlso).check(
      tool,
      callArgs,
      new MemoryState(),
    );
    expect(verdict.action).toBe('deny');
  });

  it('a rule on the name still applies to a link', async () => {
    const verdict = await gate('auto', [], ['read_file(plain-link.txt)']).check(
      ...read('plain-link.txt'),
      new MemoryState(),
    );
    expect(verdict.action).toBe('deny');
  });

  it('decides on what the link is now, not what it was at the last call', async () => {
    const g = gate('auto', [], ['read_file(protected/**)']);
    await writeFile(join(ws, 'moving.txt'), 'ordinary\n');
    expect((await g.check(...read('moving.txt'), new MemoryState())).action).toBe('allow');
    await rm(join(ws, 'moving.txt'));
    await symlink('protected/plan.txt', join(ws, 'moving.txt'));
    expect((await g.check(...read('moving.txt'), new MemoryState())).action).toBe('deny');
  });
});

describe('"always" answers and searches', () => {
  it('an "always" answer for a link remembers the file it leads to too', async () => {
    const state = new MemoryState();
    const g = gate('normal');
    expect(await g.remember(...read('alias.txt'), state)).toEqual([
      'read_file(alias.txt)',
      'read_file(.env)',
    ]);
    expect((await g.check(...read('alias.txt'), state)).action).toBe('allow');
  });

  it('tells a search which secret files to leave out, by name or by where they lead', () => {
    const state = new MemoryState();
    const skip = gate('auto', ['grep']).secretFilter('grep', state);
    expect(skip('.env')).toBe(true);
    expect(skip('alias.txt', '.env')).toBe(true);
    expect(skip('keys/id_rsa')).toBe(true);
    expect(skip('src/a.ts')).toBe(false);
    expect(skip('plain-link.txt', 'notes.txt')).toBe(false);
    const named = gate('auto', ['grep(.env)']).secretFilter('grep', state);
    expect(named('.env')).toBe(false);
    expect(named('alias.txt', '.env')).toBe(false);
    expect(named('keys/id_rsa')).toBe(true);
  });
});
