/**
 * The contract between parent and child: report_result, what a child that never reports gives
 * back, tasks whose dependency failed, plans that cannot run, and approvals that name the child.
 */
import { afterEach, expect, it } from 'vitest';
import type { ApprovalRequest } from '../../src/permissions/gate.js';
import { reply } from '../support/scripted-server.js';
import { firstUserMessage, type Harness, harness, subagentEvents } from './support.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const toolResults = () => h!.session.messages.filter((m) => m.role === 'tool').map((m) => m.content);

it('a child that ends without report_result comes back partial, with its final text', async () => {
  h = await harness({
    turns: [
      reply().tool('delegate', { objective: 'Say what is in the folder' }),
      reply().text('The folder holds only a README.'),
      reply().text('Done.'),
    ],
  });
  const { events } = await h.run('Look around');
  const result = JSON.parse(toolResults()[0]!) as Record<string, unknown>;
  expect(result).toMatchObject({ status: 'partial', summary: 'The folder holds only a README.' });
  expect(result.notes).toContain('without reporting');
  expect(result.session).toMatch(/^[0-9a-f]{10}$/);
  const end = subagentEvents(events).find((e) => e.type === 'subagent_end');
  expect(end).toMatchObject({ status: 'partial', summary: 'The folder holds only a README.' });
});

it('a report ends the child at once, and a failed report reaches the parent as failed', async () => {
  h = await harness({
    turns: [
      reply().tool('delegate', { objective: 'Fetch the data' }),
      reply().tool('report_result', {
        status: 'failed',
        summary: 'The data file is missing.',
        notes: 'Looked in data/ and tmp/.',
      }),
      reply().text('The data is missing.'),
    ],
  });
  const { done } = await h.run('Get the data');
  expect(done.text).toBe('The data is missing.');
  // Three requests: the child made no request after reporting.
  expect(h.server.requests).toHaveLength(3);
  expect(JSON.parse(toolResults()[0]!)).toMatchObject({
    status: 'failed',
    summary: 'The data file is missing.',
    notes: 'Looked in data/ and tmp/.',
  });
});

it('a task whose dependency failed is not run, and says why', async () => {
  h = await harness({
    turns: [
      reply().tool('decompose', {
        tasks: [
          { task_id: 'fetch', objective: 'Fetch the data' },
          { task_id: 'chart', objective: 'Chart the data', depends_on: ['fetch'] },
          { task_id: 'notes', objective: 'Write release notes' },
        ],
      }),
      reply().tool('report_result', { status: 'failed', summary: 'No network.' }),
      reply().tool('report_result', { status: 'done', summary: 'Notes written.' }),
      reply().text('Fetching failed, so no chart.'),
    ],
  });
  await h.run('Make the report');
  const { results } = JSON.parse(toolResults()[0]!) as { results: Array<Record<string, string>> };
  expect(results.map((r) => [r.task_id, r.status])).toEqual([
    ['fetch', 'failed'],
    ['chart', 'failed'],
    ['notes', 'done'],
  ]);
  expect(results[1]!.summary).toBe('Not run: it depends on fetch, which failed.');
  expect(results[1]!.session).toBeUndefined();
  expect(h.server.requests.map(firstUserMessage).some((brief) => brief.includes('Chart the data'))).toBe(
    false,
  );
});

it('a plan that cannot run is refused before anything starts, saying how to fix it', async () => {
  h = await harness({
    turns: [
      reply().tool('decompose', {
        tasks: [
          { task_id: 'a', objective: 'First', depends_on: ['b'] },
          { task_id: 'b', objective: 'Second', depends_on: ['a'] },
        ],
      }),
      reply().tool('decompose', { tasks: [{ task_id: 'a', objective: 'First', depends_on: ['z'] }] }),
      reply().text('I could not plan it.'),
    ],
  });
  await h.run('Plan it');
  const [cycle, unknown] = toolResults();
  expect(cycle).toBe(
    "Error: The tasks' depends_on form a cycle (a → b → a); no order can run them. Break it.",
  );
  expect(unknown).toBe('Error: Task "a" depends on "z", which is not a task_id here. Known: a.');
  expect(await (await h.runtime.sessions()).subagents(h.session.id)).toEqual([]);
});

it("a child's approval questions reach the same person, naming the child", async () => {
  const asked: ApprovalRequest[] = [];
  h = await harness({
    config: { permissions: { mode: 'normal' } },
    approve: async (request) => {
      asked.push(request);
      return { decision: 'once' };
    },
    turns: [
      reply().tool('delegate', { objective: 'Write the greeting file' }),
      reply().tool('write_file', { path: 'hello.txt', content: 'hello\n' }),
      reply().tool('report_result', {
        status: 'done',
        summary: 'Wrote hello.txt.',
        deliverables: ['hello.txt'],
      }),
      reply().text('Done.'),
    ],
  });
  const { events } = await h.run('Greet');
  expect(asked).toHaveLength(1);
  expect(asked[0]).toMatchObject({ agent: 'sub-agent: Write the greeting file' });
  expect(asked[0]!.summary).toContain('hello.txt');
  // The question is in the stream as the child's.
  const wrapped = subagentEvents(events).find(
    (e) => e.type === 'subagent_event' && e.event.type === 'approval_request',
  );
  expect(wrapped).toBeDefined();
});
