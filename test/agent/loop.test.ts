import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentEvent } from '../../src/agent/events.js';
import { runAgent } from '../../src/agent/loop.js';
import { createLlmClient } from '../../src/llm/client.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { allowAll, type PermissionPolicy, readOnly } from '../../src/permissions/policy.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { defineTool } from '../../src/tools/types.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';

const log: string[] = [];
const sleepTool = (name: string, mutates: boolean) =>
  defineTool({
    name,
    description: `${name} test tool`,
    mutates,
    parameters: z.object({ id: z.string(), ms: z.number().int().min(0) }),
    async run({ id, ms }) {
      log.push(`start ${id}`);
      await new Promise((r) => setTimeout(r, ms));
      log.push(`end ${id}`);
      return `${name} ${id} done`;
    },
  });
const failing = defineTool({
  name: 'explode',
  description: 'always fails',
  mutates: false,
  parameters: z.object({}),
  async run() {
    throw new Error('kaboom');
  },
});
const registry = new ToolRegistry([sleepTool('look', false), sleepTool('change', true), failing]);

let server: ScriptedServer;
let workspace: string;
beforeEach(async () => {
  log.length = 0;
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-loop-')));
});
afterEach(async () => {
  await server?.close();
  await rm(workspace, { recursive: true, force: true });
});

async function run(
  turns: TurnInput[],
  opts: { policy?: PermissionPolicy; maxIterations?: number; signal?: AbortSignal } = {},
) {
  server = await startScriptedServer({ turns });
  const messages: ChatMessage[] = [{ role: 'system', content: 'test system prompt' }];
  const persisted: ChatMessage[] = [];
  const events: AgentEvent[] = [];
  for await (const event of runAgent({
    llm: createLlmClient({ baseUrl: server.baseUrl, model: 'm', retry: { baseDelayMs: 1 } }),
    tools: registry,
    messages,
    task: 'do the thing',
    workspace,
    policy: opts.policy ?? allowAll,
    maxIterations: opts.maxIterations ?? 10,
    signal: opts.signal,
    onMessage: (m) => persisted.push(m),
  })) {
    events.push(event);
  }
  const results = events.filter(
    (e): e is Extract<AgentEvent, { type: 'tool_result' }> => e.type === 'tool_result',
  );
  return {
    events,
    messages,
    persisted,
    results,
    done: events.at(-1) as Extract<AgentEvent, { type: 'done' }>,
  };
}

describe('agent loop', () => {
  it('turns bad calls into results the model can act on, and carries on', async () => {
    const r = await run([
      reply()
        .tool('lok', { id: 'a', ms: 0 })
        .tool('look', { id: 5 })
        .tool('look', '{"id": "a", ms: }')
        .tool('explode', {}),
      reply().text('All sorted.'),
    ]);
    expect(r.done).toMatchObject({ type: 'done', reason: 'completed', text: 'All sorted.', turns: 2 });
    const [unknown, invalid, badJson, thrown] = r.results.map((x) => x.output);
    expect(unknown).toMatch(
      /Unknown tool "lok". Did you mean "look"\? Available tools: look, change, explode/,
    );
    expect(invalid).toMatch(/Invalid arguments for look:\n- id: .*string.*\n- ms: .*number/);
    expect(invalid).toContain('Expected: look({id: string, ms: integer})');
    expect(badJson).toMatch(/not valid JSON/);
    expect(thrown).toBe('Internal error in explode: kaboom');
    expect(r.results.every((x) => !x.ok)).toBe(true);
    // The model saw every error as a tool result, in call order, before its second turn.
    const second = server.requests[1]!.body.messages as ChatMessage[];
    const toolMessages = second.filter((m) => m.role === 'tool');
    expect(toolMessages.map((m) => m.content.slice(0, 20))).toEqual(
      [unknown, invalid, badJson, thrown].map((o) => `Error: ${o}`.slice(0, 20)),
    );
  });

  it('runs read-only calls together, mutating calls alone, and reports in call order', async () => {
    const r = await run([
      reply()
        .tool('look', { id: 'slow', ms: 150 })
        .tool('look', { id: 'fast', ms: 10 })
        .tool('change', { id: 'm1', ms: 20 })
        .tool('change', { id: 'm2', ms: 0 }),
      reply().text('done'),
    ]);
    expect(log).toEqual([
      'start slow',
      'start fast',
      'end fast',
      'end slow',
      'start m1',
      'end m1',
      'start m2',
      'end m2',
    ]);
    expect(r.results.map((x) => x.output)).toEqual([
      'look slow done',
      'look fast done',
      'change m1 done',
      'change m2 done',
    ]);
    const ids = r.events.flatMap((e) => (e.type === 'tool_call' ? [e.call.id] : []));
    expect(r.results.map((x) => x.callId)).toEqual(ids);
  });

  it('declines mutating tools under the read-only policy, telling the model how to allow them', async () => {
    const r = await run(
      [reply().tool('change', { id: 'x', ms: 0 }).tool('look', { id: 'y', ms: 0 }), reply().text('ok')],
      {
        policy: readOnly,
      },
    );
    expect(r.results[0]).toMatchObject({ ok: false, output: expect.stringContaining('--yolo') });
    expect(r.results[1]).toMatchObject({ ok: true });
    expect(log).toEqual(['start y', 'end y']);
  });

  it('stops at max iterations', async () => {
    const turns = Array.from({ length: 3 }, (_, i) => reply().tool('look', { id: `${i}`, ms: 0 }));
    const r = await run(turns, { maxIterations: 3 });
    expect(r.done).toMatchObject({ reason: 'max_iterations', turns: 3 });
  });

  it('nudges once after an empty reply', async () => {
    const r = await run([reply().text(''), reply().text('Here it is.')]);
    expect(r.events.some((e) => e.type === 'warning')).toBe(true);
    expect(r.done).toMatchObject({ reason: 'completed', text: 'Here it is.' });
    expect(r.messages.at(-2)).toMatchObject({ role: 'user', content: expect.stringContaining('empty') });
  });

  it('stops with reason error when the server keeps failing, leaving history intact', async () => {
    const r = await run([reply().httpError(400, { body: 'model not loaded' })]);
    expect(r.done).toMatchObject({ reason: 'error', text: expect.stringContaining('model not loaded') });
    expect(r.messages.map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('aborts mid-stream and keeps a valid history', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const r = await run([reply().tool('look', { id: 'a', ms: 0 }), reply().hang()], {
      signal: controller.signal,
    });
    expect(r.done).toMatchObject({ reason: 'aborted' });
    expect(r.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(r.persisted).toEqual(r.messages.slice(1));
  });

  it('strips reasoning from the history it sends back', async () => {
    await run([
      reply().reasoning('secret plan').think('more thoughts').tool('look', { id: 'a', ms: 0 }),
      reply().text('ok'),
    ]);
    const raw = server.requests[1]!.raw;
    expect(raw).not.toContain('secret plan');
    expect(raw).not.toContain('more thoughts');
  });
});
