import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CheckpointStore } from '../../src/checkpoints/store.js';

const LIMITS = { maxFileBytes: 1024, maxFiles: 1000, keep: 50, maxStoreBytes: 1024 * 1024 * 1024 };
let root: string;
let ws: string;
let home: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'hearth-ckpt-'));
  ws = path.join(root, 'ws');
  home = path.join(root, 'home');
  await mkdir(path.join(ws, 'lib/deep'), { recursive: true });
  await writeFile(path.join(ws, 'a.txt'), 'one\n');
  await writeFile(path.join(ws, 'lib/deep/b.sh'), '#!/bin/sh\necho b\n');
  await chmod(path.join(ws, 'lib/deep/b.sh'), 0o755);
  await writeFile(path.join(ws, '.gitignore'), 'build/\n');
  execFileSync('git', ['init', '-q'], { cwd: ws });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const gitState = () =>
  execFileSync('find', ['.git', '-type', 'f', '-newer', path.join(ws, 'a.txt')], { cwd: ws }).toString();

describe('CheckpointStore over real git', () => {
  it('restores the tree before a turn (content and modes), leaves .git alone, and undoes the rewind', async () => {
    const store = new CheckpointStore(home, ws, LIMITS);
    const turn = { seq: 1, label: 'refactor' };
    await store.recordTurn('s1', turn, 'before');
    // The turn: an edit, a new file, a mode change, a folder deleted by a command.
    await writeFile(path.join(ws, 'a.txt'), 'two\n');
    await writeFile(path.join(ws, 'new.txt'), 'new\n');
    await rm(path.join(ws, 'lib'), { recursive: true });
    await mkdir(path.join(ws, 'build'));
    await writeFile(path.join(ws, 'build/out.o'), 'ignored');
    await store.recordTurn('s1', turn, 'after');
    const gitBefore = gitState();

    const plan = (await store.planRewind('s1', 1, 'refactor'))!;
    expect(plan.changes.map((c) => `${c.status} ${c.path}`).sort()).toEqual([
      'added lib/deep/b.sh',
      'deleted new.txt',
      'modified a.txt',
    ]);
    expect(plan.conflicts).toEqual([]);
    await store.apply(plan);
    expect(await readFile(path.join(ws, 'a.txt'), 'utf8')).toBe('one\n');
    expect((await stat(path.join(ws, 'lib/deep/b.sh'))).mode & 0o777).toBe(0o755);
    await expect(stat(path.join(ws, 'new.txt'))).rejects.toThrow();
    expect(await readFile(path.join(ws, 'build/out.o'), 'utf8')).toBe('ignored');
    expect(gitState()).toBe(gitBefore);

    const undo = (await store.planUndo('s1'))!;
    expect(undo.description).toContain('undo the rewind');
    await store.apply(undo);
    expect(await readFile(path.join(ws, 'a.txt'), 'utf8')).toBe('two\n');
    expect(await readFile(path.join(ws, 'new.txt'), 'utf8')).toBe('new\n');
    await expect(stat(path.join(ws, 'lib'))).rejects.toThrow();
  });

  it('names files changed since the last checkpoint that a rewind would overwrite', async () => {
    const store = new CheckpointStore(home, ws, LIMITS);
    await store.recordTurn('s1', { seq: 1, label: 't' }, 'before');
    await writeFile(path.join(ws, 'a.txt'), 'agent\n');
    await store.recordTurn('s1', { seq: 1, label: 't' }, 'after');
    await writeFile(path.join(ws, 'a.txt'), 'user\n');
    const plan = (await store.planUndo('s1'))!;
    expect(plan.conflicts).toEqual(['a.txt']);
  });

  it('keeps no file over the size cap and says so; a workspace .gitattributes filter does not run', async () => {
    await writeFile(path.join(ws, 'big.bin'), Buffer.alloc(4096, 1));
    await writeFile(path.join(ws, '.gitattributes'), '* filter=evil\n');
    const store = new CheckpointStore(home, ws, LIMITS);
    const shot = await store.recordTurn('s1', { seq: 1, label: 't' }, 'before');
    expect(shot.skipped.join()).toContain('big.bin');
    const entries = await store.entries('s1');
    expect(entries).toHaveLength(1);
    expect(entries[0]!.skipped?.join()).toContain('big.bin');
  });

  it('prunes the oldest entries past the count', async () => {
    const store = new CheckpointStore(home, ws, { ...LIMITS, keep: 2 });
    for (const seq of [1, 3, 5]) await store.recordTurn('s1', { seq, label: `t${seq}` }, 'before');
    await store.prune();
    expect((await store.entries('s1')).map((e) => e.seq)).toEqual([3, 5]);
  });
});
