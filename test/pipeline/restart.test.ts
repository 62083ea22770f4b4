/**
 * The built CLI, killed (SIGKILL) at several points of a run and started again, ends with every
 * task finished exactly once: one commit per task, none lost, none doubled. Kill points are
 * counted in model requests (planner, coder, reviewer) plus a varying delay, so they also land in
 * verifying, committing and between steps.
 */
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { answer, type Script } from './support.js';

const cli = useCliHarness('pipeline-restart');

const TASKS = Array.from({ length: 6 }, (_, i) => ({
  title: `part ${i + 1}`,
  files: [`p${i + 1}.json`],
  depends_on: i === 0 ? [] : [i],
}));
const script: Script = {
  tasks: TASKS,
  coder: (title, round) =>
    round === 1 ? { [`p${title.split(' ')[1]}.json`]: `{"part": ${title.split(' ')[1]}}` } : {},
};

/** Fixed, varied kill points: after this many more model requests, and this many ms more. */
const KILLS: Array<[requests: number, ms: number]> = [
  [1, 0],
  [2, 40],
  [3, 0],
  [1, 150],
  [4, 80],
  [2, 0],
  [3, 250],
];

it('finishes every task exactly once across kills and restarts', async () => {
  const reviews = new Map<string, number>();
  const server = await cli.serve({
    extraRoutes: {
      'POST /v1/chat/completions': (_req, body) => ({ json: answer(script, reviews, body as never) }),
    },
  });
  const ws = cli.workspace;
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: ws, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: cli.home } });
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Test Person');
  git('config', 'user.email', 'test@example.com');
  git('commit', '-q', '--allow-empty', '-m', 'start');
  await writeFile(join(cli.home, 'plan.md'), '# Six parts\n\nSix JSON files, each after the one before.');
  const added = await cli.run(['plan', 'add', join(cli.home, 'plan.md')]);
  expect(added.stdout).toContain('Stored plan #1');

  let said = '';
  let killed = 0;
  for (const [more, ms] of KILLS) {
    const before = server.requests.length;
    const run = cli.start(['pipeline', 'run', '--json', '--yolo']);
    const ended = await Promise.race([
      server.waitForRequests(before + more).then(() => false),
      run.result.then(() => true),
    ]);
    if (!ended) {
      await new Promise((r) => setTimeout(r, ms));
      killed += run.child.kill('SIGKILL') ? 1 : 0;
    }
    said += (await run.result).stdout;
  }
  const last = await cli.run(['pipeline', 'run', '--json', '--yolo']);
  expect(last.code, last.stderr).toBe(0);
  said += last.stdout;
  expect(killed).toBeGreaterThan(3);
  // Tasks a killed run held were put back in their phase by a later one.
  expect(said).toContain('"note":"recovered after an interruption"');

  const status = await cli.run(['pipeline', 'status', '--json']);
  const [plan] = JSON.parse(status.stdout) as Array<{ tasks: Array<{ seq: number; state: string }> }>;
  expect(plan?.tasks.map((t) => t.state)).toEqual(Array(6).fill('done'));
  const subjects = git('log', '--format=%s').trim().split('\n').reverse().slice(1);
  expect(subjects).toEqual(TASKS.map((t, i) => `hearth(coder): task #${i + 1} ${t.title}`));
  expect(git('show', '--format=', '--name-only', 'HEAD').trim()).toBe('p6.json');
  // Adding the same plan again is recognised.
  expect((await cli.run(['plan', 'add', join(cli.home, 'plan.md')])).stdout).toContain(
    'already stored as #1',
  );
}, 240_000);
