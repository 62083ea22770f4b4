/**
 * The built-in suite as shipped: 20–30 tasks covering what the issue lists, each with a check
 * that fails on the starting workspace and passes once the task is done (a reference solution per
 * task in ./solutions, run as a model's shell call would). Checks run as `hearth eval` runs them:
 * in the sandbox (real bubblewrap), in the finished workspace.
 */
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCheck } from '../../src/eval/check.js';
import { builtinSuitePath, loadSuite } from '../../src/eval/suite.js';

const config = { sandbox: { mode: 'auto' as const, network: false as const, env: [] } };
const tasks = await loadSuite(builtinSuitePath());
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function workspaceOf(files: string | undefined): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-builtin-'));
  dirs.push(dir);
  if (files) await cp(files, dir, { recursive: true });
  return dir;
}

describe('the built-in eval suite', () => {
  it('has 20 to 30 tasks covering every kind the issue names', () => {
    expect(tasks.length).toBeGreaterThanOrEqual(20);
    expect(tasks.length).toBeLessThanOrEqual(30);
    const tags = new Set(tasks.flatMap((t) => t.tags));
    for (const tag of [
      'read',
      'fix-test',
      'javascript',
      'python',
      'rename',
      'whitespace',
      'search',
      'shell',
      'plan',
      'window',
      'refuse',
      'ask',
    ])
      expect(tags, tag).toContain(tag);
    expect(tasks.find((t) => t.tags.includes('window'))?.limits.window).toBe(8192);
  });

  it.each(tasks.map((t) => [t.name, t] as const))(
    '%s: its check fails as the task starts and passes once done',
    async (_name, task) => {
      const before = await workspaceOf(task.files);
      expect((await runCheck(config, task.check, before)).exitCode).not.toBe(0);
      const done = await workspaceOf(task.files);
      const solution = await readFile(join(import.meta.dirname, 'solutions', `${task.name}.sh`), 'utf8');
      execFileSync('sh', ['-c', solution], { cwd: done });
      const after = await runCheck(config, task.check, done);
      expect(after.exitCode, after.output).toBe(0);
    },
  );
});
