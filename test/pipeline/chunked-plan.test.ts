/**
 * A plan too big for the planner's window is planned in parts cut at headings, each part knowing
 * the tasks before it; a run stopped half-way resumes from the last finished part.
 */
import { afterEach, expect, it } from 'vitest';
import { splitPlan } from '../../src/pipeline/chunked-plan.js';
import type { PipelineEvent } from '../../src/pipeline/types.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqlitePlanStore } from '../../src/store/sqlite/plans.js';
import { type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { answer, type Bench, makeBench, roleOf, runOnce, type Script } from './support.js';

const SECTION = (name: string) =>
  `## ${name}\n\n${`The ${name.toLowerCase()} part of the work, described at some length. `.repeat(3)}`;
const PLAN = `# Three parts\n\n${SECTION('Alpha')}\n\n${SECTION('Beta')}\n\n${SECTION('Gamma')}`;

/** Per part, the tasks the planner answers; numbers in depends_on are the plan's, across parts. */
const PARTS: Record<string, Script['tasks']> = {
  'Part 1 of 3': [
    { title: 'alpha one', files: ['alphaone.json'] },
    { title: 'alpha two', files: ['alphatwo.json'], depends_on: [1] },
  ],
  'Part 2 of 3': [{ title: 'beta', files: ['beta.json'], depends_on: [2] }],
  'Part 3 of 3': [{ title: 'gamma', files: ['gamma.json'], depends_on: [3, 1] }],
};
const script: Script = {
  tasks: [],
  coder: (title, round) => (round === 1 ? { [`${title.replace(/\W/g, '')}.json`]: '{}' } : {}),
};

let made: { bench: Bench; server: ScriptedServer } | undefined;
afterEach(async () => {
  await made?.server.close();
  await made?.bench.cleanup();
  made = undefined;
});

it('cuts at headings into parts that fit, losing no text', () => {
  const parts = splitPlan(PLAN, 260);
  expect(parts).toHaveLength(3);
  expect(parts.every((p) => p.length <= 260)).toBe(true);
  expect(parts[0]).toMatch(/^# Three parts\n\n## Alpha/);
  expect(parts.join('\n\n').replace(/\s+/g, ' ')).toBe(PLAN.replace(/\s+/g, ' ').trim());
  // A paragraph longer than the limit is cut at lines, then hard.
  expect(splitPlan('x'.repeat(2500), 1000).map((p) => p.length)).toEqual([1000, 1000, 500]);
  expect(splitPlan(PLAN, 10_000)).toEqual([PLAN.trim()]);
});

it('plans in parts, resumes after a stop from the last finished part, and links tasks across parts', async () => {
  const bench = await makeBench();
  const stop = new AbortController();
  const reviews = new Map<string, number>();
  let plannerAsks = 0;
  const server = await startScriptedServer({
    onRequest: (req) => {
      const body = req.body as { messages: Array<{ content: string }> };
      if (req.path.includes('chat') && roleOf(body as never) === 'planner' && ++plannerAsks === 2)
        stop.abort();
    },
    extraRoutes: {
      'POST /v1/chat/completions': (_req, raw) => {
        const body = raw as { messages: Array<{ role: string; content: string }> };
        if (roleOf(body) !== 'planner') return { json: answer(script, reviews, body) };
        const part = Object.keys(PARTS).find((k) => body.messages[1]!.content.startsWith(k))!;
        return { json: answer({ ...script, tasks: PARTS[part]! }, reviews, body) };
      },
    },
  });
  made = { bench, server };
  const plans = new SqlitePlanStore(openDatabase(bench.dbPath));
  await plans.addPlan(bench.ws, PLAN);

  const events: PipelineEvent[] = [];
  const onEvent = (e: PipelineEvent) => events.push(e);
  const first = await runOnce(bench, {
    baseUrl: server.baseUrl,
    planChars: 260,
    signal: stop.signal,
    onEvent,
  });
  expect(first.planned).toBe(0);
  expect((await plans.plan(1)).state).toBe('new');
  const second = await runOnce(bench, { baseUrl: server.baseUrl, planChars: 260, onEvent });
  expect(second.planned).toBe(1);
  // Each finished part is an event; the part asked again after the stop is said once, when done.
  expect(events.filter((e) => e.type === 'plan_part')).toEqual([
    { type: 'plan_part', planId: 1, part: 1, parts: 3 },
    { type: 'plan_part', planId: 1, part: 2, parts: 3 },
    { type: 'plan_part', planId: 1, part: 3, parts: 3 },
  ]);

  const asked = server.requests
    .filter((r) => roleOf(r.body) === 'planner')
    .map((r) => String(r.body.messages[1].content));
  expect(asked.map((a) => a.slice(0, 11))).toEqual([
    'Part 1 of 3',
    'Part 2 of 3',
    'Part 2 of 3',
    'Part 3 of 3',
  ]);
  expect(asked[2]).toContain('Tasks 1-2 come from the earlier parts:\n1. alpha one\n2. alpha two');
  expect(asked[3]).toContain('Number your tasks from 4;');
  const tasks = await plans.tasks(1);
  const seqOf = new Map(tasks.map((t) => [t.id, t.seq]));
  expect(tasks.map((t) => [t.title, t.dependsOn.map((id) => seqOf.get(id)).sort(), t.state])).toEqual([
    ['alpha one', [], 'done'],
    ['alpha two', [1], 'done'],
    ['beta', [2], 'done'],
    ['gamma', [1, 3], 'done'],
  ]);
}, 120_000);
