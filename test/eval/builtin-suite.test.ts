/**
 * The built-in suite as shipped: 20–30 tasks covering what the issue lists, each with a check
 * that fails on the starting workspace and passes once the task is done (a reference solution per
 * task in ./solutions, run as a model's shell call would). Checks run as `hearth eval` runs them:
 * in the sandbox (real bubblewrap), in the finished workspace.
 */
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { messageCap } from '../../src/agent/context-budget.js';
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

  it('the small-window task needs every day read: its diary is over the window, each day fits one read, and its check takes only the worked-out counts', async () => {
    const task = tasks.find((t) => t.name === 'depot-diary-small-window')!;
    expect(task.limits.window).toBe(8192);
    const diary = join(task.files!, 'diary');
    const days = await Promise.all((await readdir(diary)).map((f) => readFile(join(diary, f), 'utf8')));
    expect(days).toHaveLength(6);
    // Over the window at a generous four characters a token; each day alone fits a read's share.
    expect(days.join('').length / 4).toBeGreaterThan(8192 * 1.25);
    for (const day of days) expect(day.length + day.split('\n').length * 8).toBeLessThan(messageCap(8192));
    // The counts are never written as figures: no search for digits near "lantern" finds them.
    expect(days.join('\n')).not.toMatch(/\d+\s+lanterns?/i);

    const right = ['day1: 45', 'day2: 68', 'day3: 67', 'day4: 63', 'day5: 75', 'day6: 77'];
    const answer = async (text: string) => {
      const dir = await workspaceOf(task.files);
      await writeFile(join(dir, 'answer.txt'), text);
      return runCheck(config, task.check, dir);
    };
    const lazy = {
      'the starting count every day': right.map((l) => l.replace(/\d+$/, '40')).join('\n'),
      'only the last day': 'day6: 77\n',
      'one day off by one': [...right.slice(0, 5), 'day6: 78'].join('\n'),
    };
    for (const [why, text] of Object.entries(lazy)) {
      const r = await answer(text);
      expect(r.exitCode, why).not.toBe(0);
      expect(r.output).toContain('closing count');
    }
    const ok = await answer(`${right.join('\r\n')}\r\n\n`);
    expect(ok.exitCode, ok.output).toBe(0);
  });
});
