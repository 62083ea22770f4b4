/**
 * Sub-agents over real parts: the scripted server, a real SQLite store, the runtime as the CLI
 * assembles it. A decomposition three levels deep, the tools at the depth limit, and the store's tree.
 */
import { afterEach, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { reply } from '../support/scripted-server.js';
import { firstUserMessage, type Harness, harness, offeredTools, subagentEvents } from './support.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const report = (summary: string, deliverables: string[] = []) =>
  reply().tool('report_result', { status: 'done', summary, deliverables });

it('runs a decomposition three levels deep and gives the parent every result', async () => {
  h = await harness({
    turns: [
      // 1 root: two tasks, the second building on the first
      reply().tool('decompose', {
        tasks: [
          {
            task_id: 'styles',
            objective: 'Write the stylesheet',
            deliverable_type: 'file',
            deliverable_path: 'site.css',
          },
          { task_id: 'page', objective: 'Write the page using the stylesheet', depends_on: ['styles'] },
        ],
      }),
      // 2 styles (depth 1) hands a part on
      reply().tool('delegate', { objective: 'Pick the colour palette' }),
      // 3 palette (depth 2) splits it once more
      reply().tool('decompose', { tasks: [{ task_id: 'contrast', objective: 'Check the contrast ratios' }] }),
      // 4 contrast (depth 3): at the limit
      report('Contrast is 7:1 for #0ff on #0a0a0a.'),
      // 5 palette reports
      report('Palette: #0ff on #0a0a0a, contrast checked.'),
      // 6 styles writes its file and reports
      reply().tool('write_file', { path: 'site.css', content: 'body { color: #0ff; }\n' }),
      report('Wrote site.css with the palette.', ['site.css']),
      // 8 page reports
      report('Wrote index.html linking site.css.', ['index.html']),
      // 9 root answers
      reply().text('The site is done.'),
    ],
  });
  const { events, done } = await h.run('Build a small site');
  expect(done).toMatchObject({ reason: 'completed', text: 'The site is done.' });

  const requests = h.server.requests;
  expect(requests).toHaveLength(9);
  const spawn = ['delegate', 'decompose'];
  // Children start from their brief alone, never from the parent's conversation.
  for (const i of [1, 2, 3, 6, 7]) {
    const roles = (requests[i]!.body.messages as Array<{ role: string }>).map((m) => m.role);
    expect(roles.slice(0, 2)).toEqual(['system', 'user']);
    expect(firstUserMessage(requests[i]!)).not.toContain('Build a small site');
  }
  expect(firstUserMessage(requests[1]!)).toContain('Objective: Write the stylesheet');
  expect(firstUserMessage(requests[1]!)).toContain('Deliverable: a file at site.css');
  // The root offers the spawn tools, never report_result; depth 1 and 2 offer both; depth 3 none.
  expect(offeredTools(requests[0]!)).toEqual(expect.arrayContaining(spawn));
  expect(offeredTools(requests[0]!)).not.toContain('report_result');
  for (const i of [1, 2])
    expect(offeredTools(requests[i]!)).toEqual(expect.arrayContaining([...spawn, 'report_result']));
  expect(offeredTools(requests[3]!)).toContain('report_result');
  for (const name of spawn) expect(offeredTools(requests[3]!)).not.toContain(name);
  // The dependent task's brief carries the result it builds on.
  expect(firstUserMessage(requests[7]!)).toContain('styles (done): Wrote site.css with the palette.');

  // The parent received every result.
  const toolMessages = h.session.messages.filter((m) => m.role === 'tool');
  expect(toolMessages).toHaveLength(1);
  const results = JSON.parse(toolMessages[0]!.content) as { results: Array<Record<string, unknown>> };
  expect(results.results).toEqual([
    expect.objectContaining({ task_id: 'styles', status: 'done', deliverables: ['site.css'] }),
    expect.objectContaining({
      task_id: 'page',
      status: 'done',
      summary: 'Wrote index.html linking site.css.',
    }),
  ]);

  // The events: a start and an end for each of the four children, with their depths and parents.
  const sub = subagentEvents(events);
  const starts = sub.filter((e) => e.type === 'subagent_start');
  expect(starts.map((e) => [e.depth, e.objective])).toEqual([
    [1, 'Write the stylesheet'],
    [2, 'Pick the colour palette'],
    [3, 'Check the contrast ratios'],
    [1, 'Write the page using the stylesheet'],
  ]);
  expect(starts[0]!.parentId).toBe(h.session.id);
  expect(starts[1]!.parentId).toBe(starts[0]!.id);
  expect(starts[2]!.parentId).toBe(starts[1]!.id);
  expect(starts[0]!.parentCallId).toBe(callIdOf(events, 'decompose'));
  expect(starts[0]!.parentCallId).not.toBe('');
  const ends = sub.filter((e) => e.type === 'subagent_end');
  expect(ends.map((e) => [e.id, e.status])).toEqual([
    [starts[2]!.id, 'done'],
    [starts[1]!.id, 'done'],
    [starts[0]!.id, 'done'],
    [starts[3]!.id, 'done'],
  ]);
  // A child's usage counts its own children's.
  const usageOf = (id: string) => ends.find((e) => e.id === id)!.usage.prompt;
  expect(usageOf(starts[0]!.id)).toBeGreaterThan(usageOf(starts[1]!.id));
  // The child's own events come wrapped with its id and depth.
  const wrapped = sub.filter((e) => e.type === 'subagent_event' && e.id === starts[0]!.id);
  expect(wrapped.map((e) => e.type === 'subagent_event' && e.event.type)).toContain('tool_result');
  expect(wrapped.every((e) => e.type === 'subagent_event' && e.depth === 1)).toBe(true);

  // The tree is in the store.
  const store = await h.runtime.sessions();
  const tree = async (id: string): Promise<unknown[]> =>
    Promise.all(
      (await store.subagents(id)).map(async (s) => ({
        depth: s.depth,
        title: s.title,
        status: s.status,
        children: await tree(s.id),
      })),
    );
  expect(await tree(h.session.id)).toEqual([
    {
      depth: 1,
      title: 'Write the stylesheet',
      status: 'completed',
      children: [
        {
          depth: 2,
          title: 'Pick the colour palette',
          status: 'completed',
          children: [{ depth: 3, title: 'Check the contrast ratios', status: 'completed', children: [] }],
        },
      ],
    },
    { depth: 1, title: 'Write the page using the stylesheet', status: 'completed', children: [] },
  ]);
  expect((await store.list({ workspace: h.workspace, topLevel: true })).map((s) => s.id)).toEqual([
    h.session.id,
  ]);
});

function callIdOf(events: AgentEvent[], name: string): string | undefined {
  const call = events.find((e) => e.type === 'tool_call' && e.call.name === name);
  return call?.type === 'tool_call' ? call.call.id : undefined;
}
