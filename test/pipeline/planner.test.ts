/**
 * Plans are stored once by content, and the planner's reply becomes validated tasks whether the
 * server constrains it to the JSON schema or the model wraps it in prose, fences and reasoning.
 */
import { afterEach, expect, it } from 'vitest';
import { createLlmClient } from '../../src/llm/client.js';
import { planTasks } from '../../src/pipeline/planner.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqlitePlanStore } from '../../src/store/sqlite/plans.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const PLAN = '# Greeter\n\nWrite greet.js exporting greet(name), then a test for it.';
const TASKS = {
  tasks: [
    {
      title: 'Add greet',
      description: 'greet(name)',
      files: ['greet.js'],
      depends_on: [],
      acceptance: ['exports greet'],
    },
    { title: 'Test greet', files: ['greet.test.js'], depends_on: [1] },
  ],
};

function role(baseUrl: string) {
  return { llm: createLlmClient({ baseUrl, model: 'planner', retry: { maxRetries: 0 } }), jsonSchema: true };
}

it('stores identical plan content once', async () => {
  const plans = new SqlitePlanStore(openDatabase(':memory:'));
  const first = await plans.addPlan('/w', PLAN);
  const again = await plans.addPlan('/w', `${PLAN.replace(/\n/g, '\r\n')}\n\n`);
  expect(first.created).toBe(true);
  expect(again.created).toBe(false);
  expect(again.plan.id).toBe(first.plan.id);
  expect(first.plan.title).toBe('Greeter');
  expect((await plans.addPlan('/w', `${PLAN} And a README.`)).created).toBe(true);
  expect((await plans.addPlan('/other', PLAN)).created).toBe(true);
});

it('asks for JSON-schema output and reads tasks from fenced JSON after reasoning and prose', async () => {
  server = await startScriptedServer({
    turns: [
      reply()
        .think('the plan has two steps')
        .text(`Here you go:\n\`\`\`json\n${JSON.stringify(TASKS)}\n\`\`\`\nDone.`),
    ],
  });
  const plans = new SqlitePlanStore(openDatabase(':memory:'));
  const { plan } = await plans.addPlan('/w', PLAN);
  const result = await planTasks(role(server.baseUrl), plan);
  expect(result.ok).toBe(true);
  if (!result.ok) return;
  expect(result.tasks.map((t) => [t.title, t.files, t.depends_on])).toEqual([
    ['Add greet', ['greet.js'], []],
    ['Test greet', ['greet.test.js'], [1]],
  ]);
  const format = server.requests[0]!.body.response_format;
  expect(format.type).toBe('json_schema');
  expect(format.json_schema.schema.properties).toBeDefined();

  await plans.setTasks(plan.id, result.tasks);
  const stored = await plans.tasks(plan.id);
  expect(stored.map((t) => t.state)).toEqual(['pending', 'pending']);
  expect(stored[1]!.dependsOn).toEqual([stored[0]!.id]);
  expect((await plans.plan(plan.id)).state).toBe('planned');
});

it('drops response_format when the server refuses it, and reads a bare array from prose', async () => {
  server = await startScriptedServer({
    turns: [
      reply().httpError(400, { body: '{"error":{"message":"response_format is not supported"}}' }),
      reply().text(`The tasks: ${JSON.stringify(TASKS.tasks)} — that is all.`),
    ],
  });
  const r = role(server.baseUrl);
  const result = await planTasks(r, {
    ...(await new SqlitePlanStore(openDatabase(':memory:')).addPlan('/w', PLAN)).plan,
  });
  expect(result.ok && result.tasks.length).toBe(2);
  expect(r.jsonSchema).toBe(false);
  expect(server.requests[1]!.body.response_format).toBeUndefined();
});

it('answers an invalid plan with what is wrong and asks once more, then gives up with the reason', async () => {
  const forward = { tasks: [{ title: 'A', depends_on: [2] }, { title: 'B' }] };
  server = await startScriptedServer({
    turns: [reply().text(JSON.stringify(forward)), reply().text('no idea')],
  });
  const result = await planTasks(
    role(server.baseUrl),
    (await new SqlitePlanStore(openDatabase(':memory:')).addPlan('/w', PLAN)).plan,
  );
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.error).toContain('no JSON');
  const retry = server.requests[1]!.body.messages.at(-1).content as string;
  expect(retry).toContain('task 1 depends on task 2, which is not before it');
});
