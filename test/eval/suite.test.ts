/** Reading a suite folder: tasks, limits and tags, the --tasks filter, and clear errors for bad input. */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSuite, SuiteError, selectTasks } from '../../src/eval/suite.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-suite-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function task(name: string, files: Record<string, string>): Promise<void> {
  for (const [path, body] of Object.entries(files)) {
    await mkdir(join(dir, name, path, '..'), { recursive: true });
    await writeFile(join(dir, name, path), body);
  }
  if (files.check) await chmod(join(dir, name, 'check'), 0o755);
}

describe('eval suites', () => {
  it('reads tasks in name order with their limits and tags, and filters by name or tag', async () => {
    await task('b-edit', {
      'task.md': 'Edit it.\n',
      check: '#!/bin/sh\n',
      'eval.json': '{"turns": 5, "time": 30, "window": 8192, "tags": ["edit"]}',
      'files/a.txt': 'a',
    });
    await task('a-read', { 'task.md': 'Read it.', check: '#!/bin/sh\n' });
    await mkdir(join(dir, 'not-a-task'));
    const tasks = await loadSuite(dir);
    expect(tasks.map((t) => t.name)).toEqual(['a-read', 'b-edit']);
    expect(tasks[0]).toMatchObject({ prompt: 'Read it.', limits: { turns: 30, seconds: 600 }, tags: [] });
    expect(tasks[0]!.files).toBeUndefined();
    expect(tasks[1]).toMatchObject({ limits: { turns: 5, seconds: 30, window: 8192 }, tags: ['edit'] });
    expect(tasks[1]!.files).toBe(join(dir, 'b-edit', 'files'));
    expect(selectTasks(tasks, 'a-*').map((t) => t.name)).toEqual(['a-read']);
    expect(selectTasks(tasks, 'tag:edit').map((t) => t.name)).toEqual(['b-edit']);
    expect(() => selectTasks(tasks, 'zzz')).toThrow(/No task matches --tasks zzz. Tasks: a-read, b-edit/);
  });

  it('names the file and the fix for a task without a check, bad eval.json, or an empty folder', async () => {
    await expect(loadSuite(join(dir, 'missing'))).rejects.toThrow(SuiteError);
    await expect(loadSuite(dir)).rejects.toThrow(/holds no tasks/);
    await task('t', { 'task.md': 'Do it.' });
    await expect(loadSuite(dir)).rejects.toThrow(/Task t has no check/);
    await task('t', { check: '#!/bin/sh\n', 'eval.json': '{"turns": 0, "colour": 1}' });
    await expect(loadSuite(dir)).rejects.toThrow(
      /eval\.json: .*turns.*(keys: turns, tokens, time, window, tags)/,
    );
    await task('t', { 'eval.json': '{nope' });
    await expect(loadSuite(dir)).rejects.toThrow(/eval\.json is not JSON/);
  });
});
