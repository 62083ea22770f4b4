/**
 * Pipeline transitions as events, through the built CLI: `hearth pipeline run --json` prints one
 * JSON event per line (plain text: a short line each), the same events are kept in the store and
 * read back after the run by `hearth pipeline events`, and a pause set by another process is
 * honoured by the running pipeline: the step in flight finishes, nothing new is taken until resumed;
 * a run stopped while it waits for the resume says so.
 */
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { JournalEntry } from '../../src/pipeline/journal.js';
import type { PipelineEvent, Verdict } from '../../src/pipeline/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { answer, roleOf, type Script } from './support.js';

const cli = useCliHarness('pipeline-events');

const TWO: Script = {
  tasks: [
    { title: 'greeting', files: ['hello.txt'] },
    { title: 'farewell', files: ['bye.txt'], depends_on: [1] },
  ],
  coder: (title, round): Record<string, string> =>
    title === 'greeting' ? { 'hello.txt': 'hi\n' } : { 'bye.txt': `bye ${round}\n` },
  // The second task is sent back once, then approved.
  review: (title, n): Verdict =>
    title === 'farewell' && n === 1
      ? { verdict: 'rework', findings: [{ severity: 'major', message: 'say it twice' }], summary: 'not yet' }
      : { verdict: 'approve', findings: [], summary: 'fine' },
};

function gitRepo(ws: string): void {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: ws, env: { PATH: process.env.PATH, HOME: cli.home } });
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Test Person');
  git('config', 'user.email', 'test@example.com');
  git('commit', '-q', '--allow-empty', '-m', 'start');
}

async function addPlan(name: string, markdown: string): Promise<void> {
  await writeFile(join(cli.home, name), markdown);
  const added = await cli.run(['plan', 'add', join(cli.home, name)]);
  expect(added.code, added.stderr).toBe(0);
}

const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as PipelineEvent);

it('prints every transition as a JSON line, keeps them in the store, and says them in words without --json', async () => {
  const reviews = new Map<string, number>();
  await cli.serve({
    extraRoutes: {
      'POST /v1/chat/completions': (_req, body) => ({ json: answer(TWO, reviews, body as never) }),
    },
  });
  gitRepo(cli.workspace);
  await addPlan('plan.md', '# Greetings\n\nSay hello, then goodbye.');

  const run = await cli.run(['pipeline', 'run', '--json', '--yolo']);
  expect(run.code, run.stderr).toBe(0);
  const events = lines(run.stdout);
  // The scripted server is no LM Studio: said once, before anything else, that models are not swapped.
  expect(events[0]).toMatchObject({
    type: 'model_note',
    message: expect.stringContaining('loads models itself'),
  });
  expect(events.filter((e) => e.type === 'model_note')).toHaveLength(1);
  expect(events[1]).toEqual({ type: 'plan_planned', planId: 1, tasks: 2, parts: 1 });
  // The second task's life, in order: claimed, coded, checked, sent back, redone, approved, committed.
  const second = events.filter((e) => 'seq' in e && e.seq === 2 && e.taskId === 2);
  const round = [
    'coding',
    'coded',
    'verifying',
    'task_verified',
    'task_quality',
    'reviewing',
    'task_reviewed',
  ];
  expect(second.map((e) => (e.type === 'task_state' ? e.state : e.type))).toEqual([
    ...round,
    'pending',
    ...round,
    'approved',
    'committing',
    'done',
  ]);
  expect(second.find((e) => e.type === 'task_reviewed')).toMatchObject({
    verdict: 'rework',
    findings: [{ severity: 'major', message: 'say it twice' }],
    summary: 'not yet',
  });
  expect(second.find((e) => e.type === 'task_verified')).toMatchObject({ findings: [] });
  expect(events.filter((e) => e.type === 'commit')).toHaveLength(2);
  expect(events.filter((e) => e.type === 'task_role').map((e) => e.role)).toContain('reviewer');

  // Read back by a later process: the plan's addition, then exactly what the run printed.
  const stored = await cli.run(['pipeline', 'events', '--json']);
  expect(stored.code, stored.stderr).toBe(0);
  const entries = stored.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as JournalEntry);
  expect(entries[0]?.event).toMatchObject({ type: 'plan_added', planId: 1, created: true });
  expect(entries.slice(1).map((e) => e.event)).toEqual(events);
  expect(entries.map((e) => e.id)).toEqual([...entries.map((e) => e.id)].sort((a, b) => a - b));
  const after = await cli.run(['pipeline', 'events', '--json', '--since', String(entries.at(-2)!.id)]);
  expect(after.stdout.trim().split('\n')).toHaveLength(1);

  // Without --json: one short line per transition.
  await addPlan('more.md', '# More\n\nOne more greeting.');
  const plain = await cli.run(['pipeline', 'run', '--yolo']);
  expect(plain.code, plain.stderr).toBe(0);
  expect(plain.stdout).toContain('plan #2: 2 tasks');
  expect(plain.stdout).toContain('task #1: checks passed');
  expect(plain.stdout).toContain('task #2: review says approve: fine');
  expect(plain.stdout).toMatch(/task \d+: committed [0-9a-f]{10}/);
  expect(plain.stdout).toMatch(/Pipeline idle: \d+ steps/);
  const said = await cli.run(['pipeline', 'events']);
  expect(said.stdout).toMatch(/^\s*\d+ \d{4}-\d\d-\d\dT[\d:.]+Z plan #2 added from .*more\.md$/m);
}, 180_000);

it('a pause from another process lets the running step finish, then nothing is taken until resumed', async () => {
  const reviews = new Map<string, number>();
  let held: () => void = () => {};
  const holding = new Promise<void>((resolve) => {
    held = resolve;
  });
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let coderRequests = 0;
  await cli.serve({
    extraRoutes: {
      'POST /v1/chat/completions': async (_req, body) => {
        // The first coder request waits until the pause is set: the step is in flight meanwhile.
        if (roleOf(body as never) === 'coder' && coderRequests++ === 0) {
          held();
          await released;
        }
        return { json: answer(TWO, reviews, body as never) };
      },
    },
  });
  gitRepo(cli.workspace);
  await addPlan('plan.md', '# Greetings\n\nSay hello, then goodbye.');

  const run = cli.start(['pipeline', 'run', '--json', '--yolo']);
  let out = '';
  const waiters: Array<() => void> = [];
  run.child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const wake of waiters.splice(0)) wake();
  });
  const printed = (text: string) =>
    new Promise<void>((resolve) => {
      const look = () => (out.includes(text) ? resolve() : waiters.push(look));
      look();
    });

  await holding;
  const pause = await cli.run(['pipeline', 'pause']);
  expect(pause.stdout).toContain('Paused');
  expect((await cli.run(['pipeline', 'pause'])).stdout).toContain('paused already');
  release();
  await printed('"reason":"paused"');
  const status = JSON.parse((await cli.run(['pipeline', 'status', '--json'])).stdout) as Array<{
    paused: boolean;
    tasks: Array<{ state: string }>;
  }>;
  // The step in flight finished (coded); the next phase was not taken.
  expect(status[0]?.paused).toBe(true);
  expect(status[0]?.tasks.map((t) => t.state)).toEqual(['coded', 'pending']);

  const resume = await cli.run(['pipeline', 'resume']);
  expect(resume.stdout).toContain('Resumed');
  const done = await run.result;
  expect(done.code, done.stderr).toBe(0);

  // In the journal: paused, the step finishing, the worker stopping, then nothing until resumed.
  const entries = (await cli.run(['pipeline', 'events', '--json'])).stdout
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as JournalEntry).event);
  const at = (match: (e: PipelineEvent) => boolean) => entries.findIndex(match);
  const paused = at((e) => e.type === 'paused');
  const coded = at((e) => e.type === 'task_state' && e.state === 'coded');
  const stopped = at((e) => e.type === 'idle' && e.reason === 'paused');
  const resumed = at((e) => e.type === 'resumed');
  expect(paused).toBeGreaterThan(0);
  expect(coded).toBeGreaterThan(paused);
  expect(stopped).toBe(coded + 1);
  expect(resumed).toBe(stopped + 1);
  expect(entries.slice(resumed + 1).some((e) => e.type === 'task_state' && e.state === 'verifying')).toBe(
    true,
  );
  const final = JSON.parse((await cli.run(['pipeline', 'status', '--json'])).stdout) as Array<{
    paused: boolean;
    tasks: Array<{ state: string }>;
  }>;
  expect(final[0]).toMatchObject({ paused: false, tasks: [{ state: 'done' }, { state: 'done' }] });
}, 180_000);

it('a run started while paused says it waits, and stopped there says so and ends', async () => {
  const reviews = new Map<string, number>();
  await cli.serve({
    extraRoutes: {
      'POST /v1/chat/completions': (_req, body) => ({ json: answer(TWO, reviews, body as never) }),
    },
  });
  gitRepo(cli.workspace);
  await addPlan('plan.md', '# Greetings\n\nSay hello, then goodbye.');
  expect((await cli.run(['pipeline', 'pause'])).stdout).toContain('Paused');

  const run = cli.start(['pipeline', 'run', '--yolo']);
  await new Promise<void>((resolve) => {
    let out = '';
    run.child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('paused; waiting for hearth pipeline resume')) resolve();
    });
  });
  run.child.kill('SIGINT');
  const done = await run.result;
  expect(done.code, done.stderr).toBe(0);
  expect(done.stdout).toContain(
    'Pipeline stopped while paused (0 steps, 0 recovered, 0 tokens); workers take nothing until hearth pipeline resume.',
  );
  // Nothing was planned or asked of the model.
  expect(cli.server.requests.filter((r) => roleOf(r.body as never) === 'planner')).toEqual([]);
}, 60_000);
