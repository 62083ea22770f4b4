/**
 * A pipeline worker killed (SIGKILL) in the middle of a task and started again on the same
 * machine takes over at once: the workspace's hold and the task's claim name a process of this
 * machine that no longer runs, so the new worker does not wait out the lease (an hour here, so a
 * worker that waited would stand by instead, and the test says so), and every task still ends
 * once, with one commit each.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, runCli, startCli } from '../support/cli.js';
import { machineEnv, postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import type { ScriptedServer } from '../support/scripted-server.js';
import { initRepo, onTransitions, type Script, startRoleServer } from './support.js';

const script: Script = {
  tasks: [1, 2, 3].map((n) => ({
    title: `module ${n}`,
    files: [`m${n}.json`],
    depends_on: n === 1 ? [] : [n - 1],
    acceptance: [`m${n}.json holds ${n}`],
  })),
  coder: (title, round) => {
    const n = title.split(' ')[1];
    return round === 1 ? { [`m${n}.json`]: `{"module": ${n}}` } : {};
  },
};

/** Resolves with the first line of the run's output that says one of `texts`. */
function firstOf(run: CliRun, texts: string[]): Promise<string> {
  return new Promise((resolve) => {
    let partial = '';
    run.child.stdout?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (texts.some((t) => line.includes(t))) resolve(line);
    });
    void run.result.then(() => resolve('(the run ended)'));
  });
}

describe.skipIf(!postgresBin())('a pipeline worker restarted on the same machine', () => {
  let db: TestPostgres;
  let llm: ScriptedServer;
  let root: string;
  let ws: string;
  let git: (...args: string[]) => string;

  beforeAll(async () => {
    db = await startPostgres();
    // A coder's request takes a while, as a real model's does: the kill lands inside one.
    llm = await startRoleServer(script, 300);
    root = realpathSync(mkdtempSync(join(tmpdir(), 'hearth-same-machine-')));
    ws = join(root, 'ws');
    git = initRepo(ws, root);
  }, 120_000);

  afterAll(async () => {
    await llm?.close();
    await db?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('takes over from its killed predecessor at once, and every task ends once', async () => {
    const home = join(root, 'home');
    mkdirSync(join(home, '.hearth'), { recursive: true });
    writeFileSync(join(home, '.hearth', 'config.json'), JSON.stringify({ pipeline: { lease: 3600 } }));
    const env = machineEnv(home, db.url, llm.baseUrl);
    writeFileSync(join(root, 'plan.md'), '# Three modules\n\nOne JSON file per number, 1 to 3.');
    expect((await runCli(['plan', 'add', join(root, 'plan.md')], { cwd: ws, env })).stdout).toContain(
      'Stored plan #1',
    );

    const first = startCli(['pipeline', 'run', '--json', '--yolo'], { cwd: ws, env });
    // Killed while it holds the second task, in its coder's request.
    await new Promise<void>((resolve) =>
      onTransitions(first.child, (line, seen) => {
        if (seen > 4 && line.includes('"state":"coding"')) resolve();
      }),
    );
    expect(first.child.kill('SIGKILL')).toBe(true);
    await first.result;

    const second = startCli(['pipeline', 'run', '--json', '--yolo'], { cwd: ws, env });
    const said = await firstOf(second, ['"type":"took_over"', '"reason":"standby"']);
    if (said.includes('standby')) second.child.kill('SIGTERM');
    expect(said).toContain('"type":"took_over"');
    expect(JSON.parse(said)).toMatchObject({ from: expect.stringMatching(/:\d+:[0-9a-f]{8}:/) });
    const last = await second.result;
    expect(last.code, last.stderr).toBe(0);
    const events = last.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; reason?: string; note?: string });
    expect(events.some((e) => e.note === 'recovered after an interruption')).toBe(true);
    expect(events.filter((e) => e.reason === 'standby' || e.type === 'claim_lost')).toEqual([]);

    const status = await runCli(['pipeline', 'status', '--json'], { cwd: ws, env });
    const [plan] = JSON.parse(status.stdout) as Array<{ tasks: Array<{ state: string }> }>;
    expect(plan?.tasks.map((t) => t.state)).toEqual(['done', 'done', 'done']);
    expect(git('log', '--format=%s').trim().split('\n').reverse()).toEqual([
      'start',
      'hearth(planner): plan #1 Three modules',
      'hearth(coder): task #1 module 1',
      'hearth(coder): task #2 module 2',
      'hearth(coder): task #3 module 3',
    ]);
  }, 120_000);
});
