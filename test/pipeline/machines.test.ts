/**
 * The pipeline on several machines: two `hearth pipeline run` processes, each with a home and
 * session database of its own (as on two machines), share a plan through a private PostgreSQL and
 * one workspace folder (as over a network mount). One works the workspace, the other stands by;
 * the worker is killed (SIGKILL) in the middle of a task's model request, the other takes over once
 * its lease lapses, and every task ends exactly once: done, with one commit holding its own file,
 * prerequisites first. A folder at the workspace's path that is not the one the plan was committed
 * in (another clone) is refused before anything is touched.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli } from '../support/cli.js';
import { machineEnv, postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import type { ScriptedServer } from '../support/scripted-server.js';
import {
  inDependencyOrder,
  initRepo,
  onTransitions,
  roleOf,
  startRoleServer,
  twelveTasks,
} from './support.js';

/** Seconds a worker's claim lasts unrenewed: short, so the takeover comes soon. */
const LEASE_SECONDS = 2;
const script = twelveTasks(
  (n) => `m${n}.json`,
  (n) => `{"module": ${n}}`,
);

/** Resolves with the first `task_state` line of a held phase after `n` transitions of the run's own. */
function holdsTaskAfter(child: ChildProcess, n: number): Promise<string> {
  return new Promise((resolve) =>
    onTransitions(child, (line, seen) => seen >= n && line.includes('"state":"coding"') && resolve(line)),
  );
}

describe.skipIf(!postgresBin())('the pipeline on two machines sharing PostgreSQL', () => {
  let db: TestPostgres;
  let llm: ScriptedServer;
  let root: string;
  let ws: string;
  let git: (...args: string[]) => string;

  beforeAll(async () => {
    db = await startPostgres();
    // A coder's request takes a while, as a real model's does: the kill lands inside one.
    llm = await startRoleServer(script, 400);
    root = realpathSync(mkdtempSync(join(tmpdir(), 'hearth-machines-')));
    ws = join(root, 'ws');
    git = initRepo(ws, root);
  }, 120_000);

  afterAll(async () => {
    await llm?.close();
    await db?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** A machine: its own home, session database and config, the shared database and model. */
  function machine(name: string) {
    const home = join(root, name);
    mkdirSync(join(home, '.hearth'), { recursive: true });
    writeFileSync(
      join(home, '.hearth', 'config.json'),
      JSON.stringify({ pipeline: { lease: LEASE_SECONDS } }),
    );
    const env = machineEnv(home, db.url, llm.baseUrl);
    return {
      run: (args: string[]) => runCli(args, { cwd: ws, env }),
      start: (args: string[]) => startCli(args, { cwd: ws, env }),
    };
  }

  it('finishes every task exactly once when the worker is killed mid-task and the other takes over', async () => {
    const [a, b] = [machine('a'), machine('b')];
    writeFileSync(join(root, 'plan.md'), '# Twelve modules\n\nOne JSON file per number, 1 to 12.');
    expect((await a.run(['plan', 'add', join(root, 'plan.md')])).stdout).toContain('Stored plan #1');

    const runs = [
      a.start(['pipeline', 'run', '--json', '--yolo']),
      b.start(['pipeline', 'run', '--json', '--yolo']),
    ];
    // Whichever took the workspace works; kill it while it holds a task in the middle of the plan.
    const holder = await Promise.race(runs.map((run, i) => holdsTaskAfter(run.child, 20).then(() => i)));
    const dead = runs[holder]!;
    const survivor = runs[1 - holder]!;
    expect(dead.child.kill('SIGKILL')).toBe(true);
    await dead.result;
    const last = await survivor.result;
    expect(last.code, last.stderr).toBe(0);
    const events = last.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; reason?: string; note?: string });
    // It stood by while the other worked, then took over and put the dead worker's task back.
    expect(events).toContainEqual({ type: 'idle', reason: 'standby' });
    expect(events.some((e) => e.note === 'recovered after an interruption')).toBe(true);
    // Standing by is not holding: it never lost a lease it did not have.
    expect(events.filter((e) => e.reason === 'lease_lost')).toEqual([]);

    const status = await b.run(['pipeline', 'status', '--json']);
    const [plan] = JSON.parse(status.stdout) as Array<{ tasks: Array<{ state: string }> }>;
    expect(plan?.tasks.map((t) => t.state)).toEqual(Array(12).fill('done'));
    const [start, planned, ...subjects] = git('log', '--format=%s').trim().split('\n').reverse();
    expect([start, planned]).toEqual(['start', 'hearth(planner): plan #1 Twelve modules']);
    expect(subjects).toHaveLength(12);
    expect(new Set(subjects).size).toBe(12);
    const order = subjects.map((s) => Number(/task #(\d+)/.exec(s)?.[1]));
    expect(inDependencyOrder(script.tasks, order), String(order)).toBe(true);
    for (const [i, n] of order.entries()) {
      const files = git('show', '--format=', '--name-only', `HEAD~${11 - i}`)
        .trim()
        .split('\n');
      expect(files.filter((f) => !f.startsWith('.hearth-pipeline/'))).toEqual([`m${n}.json`]);
    }
    // Both machines' events are in the one journal.
    const journal = await a.run(['pipeline', 'events']);
    expect(journal.stdout).toContain('standing by');
    expect(journal.stdout).toContain('recovered after an interruption');
  }, 240_000);

  it('refuses a folder at the workspace path that is another clone, before touching anything', async () => {
    const a = machine('a');
    // Another machine's independent repository where the shared folder should be.
    renameSync(ws, join(root, 'shared'));
    mkdirSync(ws);
    git('init', '-q', '-b', 'main');
    git('config', 'user.name', 'Test Person');
    git('config', 'user.email', 'test@example.com');
    git('commit', '-q', '--allow-empty', '-m', 'elsewhere');
    writeFileSync(join(root, 'more.md'), '# More\n\nOne more module.');
    expect((await a.run(['plan', 'add', join(root, 'more.md')])).stdout).toContain('Stored plan #2');
    const run = await a.run(['pipeline', 'run', '--json', '--yolo']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /plan #1 was committed as [0-9a-f]{10} in a folder at .* that is not this one/,
    );
    expect(git('log', '--format=%s').trim()).toBe('elsewhere');
    expect(llm.requests.filter((r) => roleOf(r.body as never) === 'planner')).toHaveLength(1);
  }, 60_000);
});
