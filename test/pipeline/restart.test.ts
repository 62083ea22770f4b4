/**
 * The "done when": the built CLI working a 12-task plan with dependencies is killed
 * (SIGKILL) at 30 random points and started again, and ends with every task finished exactly once:
 * one commit per task, none lost, none doubled. A kill point is a number of transitions the run
 * reports plus a delay, while the scripted model takes a random while to answer, so kills land in
 * every phase: during a model request, in verifying, committing and between steps. The points come from a seeded generator: the seed is printed, and PIPELINE_KILL_SEED=N
 * replays a failing run.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
// The seeded generator the memory bench makes its corpus with.
import { seededRandom } from '../support/seeded-random.js';
import { answer, inDependencyOrder, onTransitions, twelveTasks } from './support.js';

const cli = useCliHarness('pipeline-restart');

const KILLS = 30;
const script = twelveTasks(
  (n) => `m${n}.json`,
  (n) => `{"module": ${n}}`,
);

/**
 * Resolves once the run has reported `n` transitions of its own (recoveries of what an earlier run
 * left do not count), so every run gets somewhere and the kills spread over the whole plan.
 */
function progressed(child: ChildProcess, n: number): Promise<void> {
  return new Promise((resolve) => onTransitions(child, (_line, seen) => seen >= n && resolve()));
}

it('finishes every task of a 12-task plan exactly once across 30 kills and restarts', async () => {
  const seed = Number(process.env.PIPELINE_KILL_SEED ?? Math.floor(Math.random() * 2 ** 31));
  console.log(`pipeline kill test seed: ${seed} (replay with PIPELINE_KILL_SEED=${seed})`);
  const random = seededRandom(seed);
  const reviews = new Map<string, number>();
  const server = await cli.serve({
    extraRoutes: {
      // A model takes its time: kills land during requests as well as between them.
      'POST /v1/chat/completions': async (_req, body) => {
        await new Promise((r) => setTimeout(r, Math.floor(random() * 50)));
        return { json: answer(script, reviews, body as never) };
      },
    },
  });
  const ws = cli.workspace;
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: ws, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: cli.home } });
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Test Person');
  git('config', 'user.email', 'test@example.com');
  git('commit', '-q', '--allow-empty', '-m', 'start');
  await writeFile(join(cli.home, 'plan.md'), '# Twelve modules\n\nOne JSON file per number, 1 to 12.');
  const added = await cli.run(['plan', 'add', join(cli.home, 'plan.md')]);
  expect(added.stdout).toContain('Stored plan #1');

  let said = '';
  let killed = 0;
  let runs = 0;
  // Each run gets further before it is killed (the work it finished is kept), so the loop ends;
  // the bound only turns a regression into a failure instead of a hang.
  while (killed < KILLS && runs < KILLS * 3) {
    runs++;
    // One to three transitions a run: 30 runs cover about half of the plan's 84, so every kill
    // happens and the last run finishes the rest.
    const more = 1 + Math.floor(random() * 3);
    const ms = Math.floor(random() * 60);
    const run = cli.start(['pipeline', 'run', '--json', '--yolo']);
    const ended = await Promise.race([
      progressed(run.child, more).then(() => false),
      run.result.then(() => true),
    ]);
    if (!ended) {
      await new Promise((r) => setTimeout(r, ms));
      killed += run.child.kill('SIGKILL') ? 1 : 0;
    }
    const result = await run.result;
    said += result.stdout;
    if (ended) break;
  }
  const committed = Number(git('rev-list', '--count', 'HEAD').trim()) - 1;
  console.log(
    `seed ${seed}: ${killed} kills in ${runs} runs, ${server.requests.length} requests, ${committed} commits before the last run`,
  );
  const last = await cli.run(['pipeline', 'run', '--json', '--yolo']);
  expect(last.code, `seed ${seed}: ${last.stderr}`).toBe(0);
  said += last.stdout;
  expect(killed, `seed ${seed}`).toBe(KILLS);
  // Tasks a killed run held were put back in their phase by a later one.
  expect(said).toContain('"note":"recovered after an interruption"');

  const status = await cli.run(['pipeline', 'status', '--json']);
  const [plan] = JSON.parse(status.stdout) as Array<{ tasks: Array<{ seq: number; state: string }> }>;
  expect(
    plan?.tasks.map((t) => t.state),
    `seed ${seed}`,
  ).toEqual(Array(12).fill('done'));
  const [start, planned, ...subjects] = git('log', '--format=%s').trim().split('\n').reverse();
  expect([start, planned]).toEqual(['start', 'hearth(planner): plan #1 Twelve modules']);
  expect(subjects, `seed ${seed}`).toHaveLength(12);
  expect(new Set(subjects).size, `seed ${seed}: a task committed twice`).toBe(12);
  const order = subjects.map((s) => Number(/task #(\d+)/.exec(s)?.[1]));
  expect(inDependencyOrder(script.tasks, order), `seed ${seed}: ${order}`).toBe(true);
  // Each commit holds exactly its own task's file.
  for (const [i, n] of order.entries()) {
    const files = git('show', '--format=', '--name-only', `HEAD~${11 - i}`)
      .trim()
      .split('\n');
    expect(files.filter((f) => !f.startsWith('.hearth-pipeline/'))).toEqual([`m${n}.json`]);
  }
  // The quality report counts the coder rounds the kills cost as attempts.
  const report = await cli.run(['pipeline', 'report', '1']);
  expect(report.stdout).toContain('#1 Twelve modules [planned]: 12 tasks (12 done)');
  expect(Number(/attempts (\d+)/.exec(report.stdout)?.[1])).toBeGreaterThanOrEqual(12);
  expect((await cli.run(['pipeline', 'report', '7'])).stderr).toContain('No plan #7 in this workspace');
  // Adding the same plan again is recognised.
  expect((await cli.run(['plan', 'add', join(cli.home, 'plan.md')])).stdout).toContain(
    'already stored as #1',
  );
}, 240_000);
