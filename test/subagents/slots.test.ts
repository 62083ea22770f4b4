/**
 * On llama.cpp with several slots, sub-agents keep off the parent's slot so its prompt cache
 * survives. `id_slot` is llama-server's request field for the slot (tools/server/README.md: "Assign
 * the completion task to an specific slot"); `total_slots` in GET /props says how many there are.
 */
import { afterEach, expect, it } from 'vitest';
import { SlotPool } from '../../src/subagents/slots.js';
import { llamaCppProps } from '../support/probe-fixtures.js';
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
