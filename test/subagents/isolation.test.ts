/**
 * One child's failure does not sink the others: errors, hangs and limits end that child alone, with
 * a `failed` result that says why; aborting the parent stops them all and keeps what they did.
 * Children run side by side here, so each answers by its brief (routeByBrief), whatever the order.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { SubagentEvent } from '../../src/agent/events.js';
import { ManualClock } from '../support/manual-clock.js';
import { firstUserMessage, type Harness, harness, routeByBrief, subagentEvents } from './support.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const CHAT = 'POST /v1/chat/completions';
const done = (summary: string) => ({
  calls: [{ name: 'report_result', args: { status: 'done', summary } }],
});

it('with four children side by side, one erroring and one hanging, the other two results arrive', async () => {
  const clock = new ManualClock();
  h = await harness({
    clock,
    config: { subagents: { parallel: 4, time_limit: 60 } },
    routes: {
      [CHAT]: routeByBrief({
        'Run the four checks': [
          {
            calls: [
              {
                name: 'decompose',
                args: {
                  tasks: ['alpha', 'bravo', 'charlie', 'delta'].map((id) => ({
                    task_id: id,
                    objective: `Check ${id}`,
                  })),
                },
              },
            ],
          },
          { text: 'Two checks passed; two failed.' },
        ],
        'Check alpha': [done('alpha is fine')],
        'Check bravo': [{ status: 500, message: 'the model crashed' }],
        'Check charlie': ['hang'],
        'Check delta': [done('delta is fine')],
      }),
    },
  });
  let ended = 0;
  let othersEnded = () => {};
  const othersOver = new Promise<void>((resolve) => {
    othersEnded = resolve;
  });
  const running = h.run('Run the four checks', {
    onEvent: (event) => {
      if (event.type === 'subagent_end' && ++ended === 3) othersEnded();
    },
  });
  // The other three are over, and charlie waits on a server that never answers: its minute is up.
  await othersOver;
  await h.server.waitForRequests(5);
  expect(h.server.requests.some((r) => firstUserMessage(r).includes('Check charlie'))).toBe(true);
  expect(ended).toBe(3);
  clock.advance(60_000);
  const { events, done: end } = await running;
  expect(end).toMatchObject({ reason: 'completed', text: 'Two checks passed; two failed.' });

  const tool = h.session.messages.find((m) => m.role === 'tool');
  const { results } = JSON.parse(tool!.content) as {
    results: Array<{ task_id: string; status: string; summary: string }>;
  };
  const byId = Object.fromEntries(results.map((r) => [r.task_id, r]));
  expect(byId.alpha).toMatchObject({ status: 'done', summary: 'alpha is fine' });
  expect(byId.delta).toMatchObject({ status: 'done', summary: 'delta is fine' });
  expect(byId.bravo!.status).toBe('failed');
  expect(byId.bravo!.summary).toContain('the model crashed');
  expect(byId.charlie!.status).toBe('failed');
  expect(byId.charlie!.summary).toContain('time limit (60s)');

  // Each child's end is in the stream, and the parent went on to answer.
  const ends = subagentEvents(events).filter(
    (e): e is Extract<SubagentEvent, { type: 'subagent_end' }> => e.type === 'subagent_end',
  );
  expect(ends.map((e) => e.status).sort()).toEqual(['done', 'done', 'failed', 'failed']);
  // All four were under way at once: every child's request came before any result was back.
  const starts = subagentEvents(events).filter((e) => e.type === 'subagent_start');
  expect(events.indexOf(starts[3]!)).toBeLessThan(events.indexOf(ends[0]!));
});

it('a child that runs out of turns ends failed with the reason; its sibling still runs', async () => {
  const same = { calls: [{ name: 'read_file', args: { path: 'missing.txt' } }] };
  h = await harness({
    config: { subagents: { max_turns: 2 } },
    routes: {
      [CHAT]: routeByBrief({
        'Do both': [
          {
            calls: [
              {
                name: 'decompose',
                args: {
                  tasks: [
                    { task_id: 'spin', objective: 'Spin around' },
                    { task_id: 'calm', objective: 'Stay calm' },
                  ],
                },
              },
            ],
          },
          { text: 'One spun out.' },
        ],
        'Spin around': [same, same, same],
        'Stay calm': [done('calm')],
      }),
    },
  });
  const { done: end } = await h.run('Do both');
  expect(end.reason).toBe('completed');
  const { results } = JSON.parse(h.session.messages.find((m) => m.role === 'tool')!.content) as {
    results: Array<{ task_id: string; status: string; summary: string }>;
  };
  expect(results[0]).toMatchObject({ task_id: 'spin', status: 'failed' });
  expect(results[0]!.summary).toContain('Stopped after 2 turns');
  expect(results[1]).toMatchObject({ task_id: 'calm', status: 'done' });
});

it('aborting the parent stops every child and keeps what each had done', async () => {
  const controller = new AbortController();
  h = await harness({
    // Time stands still: the children stop on the abort itself, with no time limit to help.
    clock: new ManualClock(),
    config: { subagents: { parallel: 2 } },
    routes: {
      [CHAT]: routeByBrief({
        'Write both files': [
          {
            calls: [
              {
                name: 'decompose',
                args: {
                  tasks: [
                    { task_id: 'one', objective: 'Write one.txt' },
                    { task_id: 'two', objective: 'Write two.txt' },
                    { task_id: 'three', objective: 'Write three.txt', depends_on: ['one'] },
                  ],
                },
              },
            ],
          },
        ],
        'Write one.txt': [
          { calls: [{ name: 'write_file', args: { path: 'one.txt', content: '1\n' } }] },
          'hang',
        ],
        'Write two.txt': [
          { calls: [{ name: 'write_file', args: { path: 'two.txt', content: '2\n' } }] },
          'hang',
        ],
      }),
    },
  });
  let hanging = 0;
  const { events, done: end } = await h.run('Write both files', {
    signal: controller.signal,
    onEvent: (event) => {
      // Both children have written their file and are waiting on the model: now stop everything.
      if (event.type === 'subagent_event' && event.event.type === 'turn_start' && event.event.turn === 2) {
        if (++hanging === 2) controller.abort();
      }
    },
  });
  expect(end.reason).toBe('aborted');
  const sub = subagentEvents(events);
  const ends = sub.filter((e) => e.type === 'subagent_end');
  expect(ends).toHaveLength(2);
  for (const e of ends) {
    expect(e).toMatchObject({ status: 'partial' });
    expect(e.type === 'subagent_end' && e.summary).toContain('Interrupted');
  }
  // The task waiting on one never started.
  expect(
    sub.filter((e) => e.type === 'subagent_start').map((e) => e.type === 'subagent_start' && e.taskId),
  ).toEqual(['one', 'two']);
  // What they did is kept: the files, and each child's stored session with its call and result.
  expect(existsSync(join(h.workspace, 'one.txt'))).toBe(true);
  expect(existsSync(join(h.workspace, 'two.txt'))).toBe(true);
  const store = await h.runtime.sessions();
  const children = await store.subagents(h.session.id);
  expect(children).toHaveLength(2);
  for (const child of children) {
    const roles = (await store.messages(child.id)).map((m) => m.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
  }
});
