/**
 * The pipeline in the gateway: a real `hearth pipeline run` (the built CLI, another process) works a
 * plan on the gateway's database, and the gateway shows it: live on the activity WebSocket, as
 * status at /api/pipeline, and as the recorded events at /api/pipeline/events. Pause and resume
 * over HTTP reach the same flag the CLI and the agent's tools set.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { approve, type Script, startRoleServer } from '../pipeline/support.js';
import { runCli } from '../support/cli.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import type { ScriptedServer } from '../support/scripted-server.js';

let gw: TestGateway | undefined;
let models: ScriptedServer | undefined;
afterEach(async () => {
  await gw?.close();
  await models?.close();
  gw = undefined;
  models = undefined;
});

const SCRIPT: Script = {
  tasks: [
    { title: 'one', files: ['one.txt'] },
    { title: 'two', files: ['two.txt'], depends_on: [1] },
  ],
  coder: (title) => ({ [`${title}.txt`]: `${title}\n` }),
  review: () => approve,
};

type Entry = { id: number; workspace: string; at: number; event: { type: string } & Record<string, unknown> };

it('shows a pipeline run by another process live, as status and as its recorded events; pauses and resumes it', async () => {
  const g = await startGateway();
  gw = g;
  models = await startRoleServer(SCRIPT);
  const activity = await g.socket('/ws/activity');
  // The CLI on the gateway's database, as `hearth pipeline run` beside `hearth serve` is.
  const env = { HOME: g.dir, HEARTH_HOME: g.dir, HEARTH_BASE_URL: models.baseUrl };
  await writeFile(join(g.dir, 'plan.md'), '# Numbers\n\nWrite one, then two.');
  expect((await runCli(['plan', 'add', join(g.dir, 'plan.md')], { cwd: g.workspace, env })).code).toBe(0);
  const run = await runCli(['pipeline', 'run', '--json', '--yolo'], { cwd: g.workspace, env });
  expect(run.code, run.stderr).toBe(0);
  const printed = run.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Entry['event']);

  // Live: every event the run printed reaches the activity feed, in order, with its number.
  const pipelineEvents = () => activity.messages.filter((m) => m.type === 'pipeline') as unknown as Entry[];
  await activity.next(() => pipelineEvents().length >= printed.length + 1);
  const live = pipelineEvents();
  expect(live.map((m) => m.event)).toEqual([
    { type: 'plan_added', planId: 1, file: expect.any(String), created: true },
    ...printed,
  ]);
  expect(live.every((m) => m.workspace === g.workspace)).toBe(true);

  const status = await g.json<{
    paused: boolean;
    plans: Array<Record<string, unknown> & { tasks: Array<{ seq: number; state: string }> }>;
    recent: Entry[];
  }>('/api/pipeline?recent=5');
  expect(status.paused).toBe(false);
  expect(status.plans).toHaveLength(1);
  expect(status.plans[0]).toMatchObject({
    id: 1,
    title: 'Numbers',
    state: 'planned',
    by_state: { done: 2 },
    current: null,
    reviews: 2,
    debt: 0,
  });
  expect((status.plans[0]!.tokens as { total: number }).total).toBe(15 * models.requests.length);
  expect(status.plans[0]!.tasks.map((t) => [t.seq, t.state])).toEqual([
    [1, 'done'],
    [2, 'done'],
  ]);
  expect(status.recent.map((e) => e.id)).toEqual(live.slice(-5).map((e) => e.id));

  // The record, as a web page reloaded later reads it: the same numbered events.
  const { events } = await g.json<{ events: Entry[] }>('/api/pipeline/events?since=0');
  expect(events).toEqual(live.map(({ id, workspace, at, event }) => ({ id, workspace, at, event })));
  const after = await g.json<{ events: Entry[] }>(`/api/pipeline/events?since=${events.at(-2)!.id}`);
  expect(after.events).toEqual([events.at(-1)]);

  // Pause and resume over HTTP: the flag every worker of the workspace reads, said on the feed.
  expect(await g.json('/api/pipeline/pause', {})).toEqual({ paused: true, changed: true });
  expect(await g.json('/api/pipeline/pause', {})).toEqual({ paused: true, changed: false });
  await activity.next((m) => m.type === 'pipeline' && (m.event as Entry['event']).type === 'paused');
  expect((await g.json<{ paused: boolean }>('/api/pipeline')).paused).toBe(true);
  const cliStatus = await runCli(['pipeline', 'status'], { cwd: g.workspace, env });
  expect(cliStatus.stdout).toMatch(/^Paused:/);
  expect(await g.json('/api/pipeline/resume', {})).toEqual({ paused: false, changed: true });
  await activity.next((m) => m.type === 'pipeline' && (m.event as Entry['event']).type === 'resumed');

  // Documented with the rest of the API.
  const doc = await g.json<{ paths: Record<string, unknown> }>('/doc');
  for (const path of ['/api/pipeline', '/api/pipeline/events', '/api/pipeline/pause', '/api/pipeline/resume'])
    expect(doc.paths, path).toHaveProperty([path]);
}, 120_000);

it('answers for another workspace, and an empty one with no plans', async () => {
  const g = await startGateway();
  gw = g;
  const status = await g.json<{ workspace: string; plans: unknown[]; recent: unknown[] }>(
    `/api/pipeline?workspace=${encodeURIComponent(g.dir)}`,
  );
  expect(status).toEqual({ workspace: g.dir, paused: false, plans: [], recent: [] });
  const unauthenticated = await g.http('/api/pipeline', { headers: { authorization: 'Bearer wrong' } });
  expect(unauthenticated.status).toBe(401);
  const refused = await g.http('/api/pipeline/pause', {
    method: 'POST',
    headers: { authorization: 'Bearer wrong' },
  });
  expect(refused.status).toBe(401);
});
