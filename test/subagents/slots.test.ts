/**
 * On llama.cpp with several slots, sub-agents keep off the parent's slot so its prompt cache
 * survives. `id_slot` is llama-server's request field for the slot (tools/server/README.md: "Assign
 * the completion task to an specific slot"); `total_slots` in GET /props says how many there are.
 */
import { afterEach, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { SlotPool } from '../../src/subagents/slots.js';
import { ManualClock } from '../support/manual-clock.js';
import { llamaCppProps } from '../support/probe-fixtures.js';
import type { RecordedRequest } from '../support/scripted-server.js';
import { waitUntil } from '../support/wait.js';
import { firstUserMessage, type Harness, harness, routeByBrief } from './support.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const scripts = {
  'Check both': [
    {
      calls: [
        {
          name: 'decompose',
          args: {
            tasks: [
              { task_id: 'a', objective: 'Check left' },
              { task_id: 'b', objective: 'Check right' },
            ],
          },
        },
      ],
    },
    { text: 'Both fine.' },
  ],
  'Check left': [{ calls: [{ name: 'report_result', args: { status: 'done', summary: 'left ok' } }] }],
  'Check right': [{ calls: [{ name: 'report_result', args: { status: 'done', summary: 'right ok' } }] }],
};

const slotsByBrief = () =>
  h!.server.requests.map((r) => [firstUserMessage(r).split('\n')[0], r.body.id_slot] as const);

it('pins the parent to slot 0 and gives children running side by side their own slots', async () => {
  h = await harness({
    config: { subagents: { parallel: 2 } },
    routes: {
      'GET /props': () => ({ json: { ...llamaCppProps, total_slots: 3 } }),
      'POST /v1/chat/completions': routeByBrief(scripts),
    },
  });
  await h.run('Check both');
  const sent = slotsByBrief();
  expect(sent.filter(([brief]) => brief === 'Check both').map(([, slot]) => slot)).toEqual([0, 0]);
  const childSlots = sent.filter(([brief]) => brief !== 'Check both').map(([, slot]) => slot);
  expect([...childSlots].sort()).toEqual([1, 2]);
});

it('names no slot when the server has one', async () => {
  h = await harness({
    routes: {
      'GET /props': () => ({ json: { ...llamaCppProps, total_slots: 1 } }),
      'POST /v1/chat/completions': routeByBrief(scripts),
    },
  });
  await h.run('Check both');
  expect(h.server.requests.length).toBe(4);
  expect(h.server.requests.every((r) => !('id_slot' in r.body))).toBe(true);
});

it('shares the other slots in turn when more children run than there are slots', () => {
  const pool = new SlotPool(3);
  expect(pool.root).toBe(0);
  const taken = [pool.acquire(), pool.acquire(), pool.acquire()];
  expect(taken).toEqual([1, 2, 1]);
  pool.release(2);
  expect(pool.acquire()).toBe(2);
  expect(new SlotPool(1).acquire()).toBeUndefined();
  expect(new SlotPool(1).root).toBeUndefined();
});

it('children sharing a slot wait in line for it in Hearth; the wait does not count against their time limit', async () => {
  const clock = new ManualClock();
  const held: Array<() => void> = [];
  const chat = routeByBrief({
    'Run the three checks': [
      {
        calls: [
          {
            name: 'decompose',
            args: { tasks: ['one', 'two', 'three'].map((id) => ({ task_id: id, objective: `Check ${id}` })) },
          },
        ],
      },
      { text: 'Checked.' },
    ],
    ...Object.fromEntries(
      ['one', 'two', 'three'].map((id) => [
        `Check ${id}`,
        [{ calls: [{ name: 'report_result', args: { status: 'done', summary: `${id} ok` } }] }],
      ]),
    ),
  });
  h = await harness({
    clock,
    config: { subagents: { parallel: 3, time_limit: 60 } },
    routes: {
      // Two slots: the parent keeps slot 0, so the three children share slot 1.
      'GET /props': () => ({ json: { ...llamaCppProps, total_slots: 2 } }),
      // Each child's answer waits until the test lets it go.
      'POST /v1/chat/completions': (req, body) => {
        const answer = chat(req, body);
        if (isParent({ body } as RecordedRequest)) return answer;
        return new Promise((resolve) => held.push(() => resolve(answer)));
      },
    },
  });
  const events: AgentEvent[] = [];
  const running = h.run('Run the three checks', { onEvent: (event) => events.push(event) });

  // One child's request is at the server; the other two wait in line in Hearth, and say so.
  await waitUntil(
    () => held.length === 1 && waitsSaid(events) === 2,
    () =>
      `one child at the server and two in line (${held.length} held, ${waitsSaid(events)} waiting, events ${events.map((e) => e.type).join(' ')})`,
  );
  expect(held).toHaveLength(1);
  // A minute passes: the child whose request the server holds runs out of time; those in line do not.
  clock.advance(61_000);
  await waitUntil(() => held.length === 2, 'the second child at the server');
  held[1]!();
  await waitUntil(() => held.length === 3, 'the third child at the server');
  held[2]!();
  const { done } = await running;
  expect(done.text).toBe('Checked.');
  const ends = events.filter(
    (e): e is Extract<AgentEvent, { type: 'subagent_end' }> => e.type === 'subagent_end',
  );
  expect(ends.map((e) => e.status).sort()).toEqual(['done', 'done', 'failed']);
  expect(ends.find((e) => e.status === 'failed')!.summary).toContain('time limit (60s)');
});

const isParent = (request: RecordedRequest) => firstUserMessage(request).includes('Run the three checks');

/** How many children told their parent they wait for a slot. */
function waitsSaid(events: AgentEvent[]): number {
  return events.filter(
    (e) =>
      e.type === 'subagent_event' &&
      e.event.type === 'warning' &&
      e.event.message.startsWith('Waiting for a free model server slot'),
  ).length;
}
