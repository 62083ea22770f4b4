import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentEvent } from '../../src/agent/events.js';
import { runAgent } from '../../src/agent/loop.js';
import { createLlmClient } from '../../src/llm/client.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { type ApprovalAnswer, type Approver, PermissionGate } from '../../src/permissions/gate.js';
import type { PermissionMode } from '../../src/permissions/modes.js';
import type { SandboxChoice, SandboxSource } from '../../src/sandbox/types.js';
import type { AuditEntry } from '../../src/store/rows.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { defineTool, MemoryState } from '../../src/tools/types.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';
import { unconfinedSandbox } from '../support/tool-context.js';
import { waitUntil } from '../support/wait.js';

const log: string[] = [];
/** Call id → the call it waits for before it ends: only calls that run at the same time can do that. */
const waitsFor = new Map<string, string>();
const sleepTool = (name: string, mutates: boolean) =>
  defineTool({
    name,
    description: `${name} test tool`,
    mutates,
    parameters: z.object({ id: z.string(), ms: z.number().int().min(0) }),
    async run({ id, ms }) {
      log.push(`start ${id}`);
      await new Promise((r) => setTimeout(r, ms));
      const other = waitsFor.get(id);
      if (other) await waitUntil(() => log.includes(`end ${other}`), `call ${other} to end while ${id} runs`);
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

let server: ScriptedServer | undefined;
let workspace: string;
beforeEach(async () => {
  log.length = 0;
  waitsFor.clear();
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-loop-')));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(workspace, { recursive: true, force: true });
});

interface RunOpts {
  mode?: PermissionMode;
  approve?: Approver;
  answers?: Map<string, ApprovalAnswer>;
  maxIterations?: number;
  tokenBudget?: number;
  todoNudges?: number;
  signal?: AbortSignal;
  messages?: ChatMessage[];
  task?: string;
  state?: MemoryState;
  sandbox?: SandboxSource;
  /** Sees each event as it is yielded, before the loop goes on. */
  onEvent?: (event: AgentEvent) => void;
}

async function run(turns: TurnInput[], opts: RunOpts = {}) {
  server ??= await startScriptedServer();
  server.push(...turns);
  const messages: ChatMessage[] = opts.messages ?? [{ role: 'system', content: 'test system prompt' }];
  const audit: AuditEntry[] = [];
  const persisted: ChatMessage[] = [];
  const events: AgentEvent[] = [];
  for await (const event of runAgent({
    llm: createLlmClient({ baseUrl: server.baseUrl, model: 'm', retry: { baseDelayMs: 1 } }),
    tools: registry,
    messages,
    task: 'task' in opts ? opts.task : 'do the thing',
    workspace,
    gate: new PermissionGate(opts.mode ?? 'auto', { allow: [], deny: [] }, workspace),
    approve: opts.approve,
    answers: opts.answers,
    sandbox: opts.sandbox ?? unconfinedSandbox(workspace),
    maxIterations: opts.maxIterations ?? 10,
    tokenBudget: opts.tokenBudget,
    todoNudges: opts.todoNudges,
    durable: opts.state,
    signal: opts.signal,
    onMessage: (m) => persisted.push(m),
    onAudit: (e) => audit.push(e),
  })) {
    events.push(event);
    opts.onEvent?.(event);
  }
  const results = events.filter(
    (e): e is Extract<AgentEvent, { type: 'tool_result' }> => e.type === 'tool_result',
  );
  return {
    events,
    messages,
    persisted,
    results,
    audit,
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
    const second = server!.requests[1]!.body.messages as ChatMessage[];
    const toolMessages = second.filter((m) => m.role === 'tool');
    expect(toolMessages.map((m) => m.content.slice(0, 20))).toEqual(
      [unknown, invalid, badJson, thrown].map((o) => `Error: ${o}`.slice(0, 20)),
    );
  });

  it('runs read-only calls together, mutating calls alone, and reports in call order', async () => {
    // `slow` ends only after `fast` has: possible only if the two run at the same time.
    waitsFor.set('slow', 'fast');
    const r = await run([
      reply()
        .tool('look', { id: 'slow', ms: 0 })
        .tool('look', { id: 'fast', ms: 0 })
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

  it('refuses mutating tools in plan mode, telling the model to present a plan', async () => {
    const r = await run(
      [reply().tool('change', { id: 'x', ms: 0 }).tool('look', { id: 'y', ms: 0 }), reply().text('ok')],
      {
        mode: 'plan',
      },
    );
    expect(r.results[0]).toMatchObject({
      ok: false,
      output: expect.stringMatching(/Plan mode.*present your plan/),
    });
    expect(r.results[1]).toMatchObject({ ok: true });
    expect(log).toEqual(['start y', 'end y']);
    expect(r.audit.map((e) => [e.tool, e.decision])).toEqual([
      ['change', 'denied'],
      ['look', 'allowed'],
    ]);
  });

  it('asks before mutating calls in normal mode: once, always for similar calls, and no with a reason', async () => {
    const asked: string[] = [];
    const answers: ApprovalAnswer[] = [
      { decision: 'once' },
      { decision: 'always' },
      { decision: 'deny', reason: 'the user said no: "not now"' },
    ];
    const r = await run(
      [
        reply().tool('change', { id: 'a', ms: 0 }),
        reply().tool('change', { id: 'b', ms: 0 }),
        // Same tool with other arguments: covered by the "always" answer, so not asked.
        reply().tool('change', { id: 'c', ms: 0 }).tool('look', { id: 'd', ms: 0 }),
        reply().tool('explode', {}),
        reply().text('done'),
      ],
      {
        mode: 'manual',
        approve: async (request) => {
          asked.push(request.call.name);
          return answers.shift() ?? { decision: 'once' };
        },
      },
    );
    expect(r.events.filter((e) => e.type === 'approval_request')).toHaveLength(asked.length);
    // manual mode asks even for read-only tools (look), but not again for change after "always".
    expect(asked).toEqual(['change', 'change', 'look', 'explode']);
    expect(log.filter((l) => l.startsWith('start'))).toEqual(['start a', 'start b', 'start c']);
    expect(r.results[3]).toMatchObject({ ok: false, output: expect.stringContaining('not now') });
    expect(r.results.map((x) => x.ok)).toEqual([true, true, true, false, false]);
    expect(r.audit.map((e) => e.decision)).toEqual([
      'approved',
      'approved_always',
      'allowed',
      'declined',
      'approved',
    ]);
  });

  it('pauses when nobody can be asked, and resumes with the answers', async () => {
    const state = new MemoryState();
    const first = await run(
      [
        reply()
          .tool('look', { id: 'r', ms: 0 })
          .tool('change', { id: 'w1', ms: 0 })
          .tool('change', { id: 'w2', ms: 0 }),
      ],
      { mode: 'normal', state },
    );
    expect(first.done).toMatchObject({ reason: 'paused', pending: [{ name: 'change' }, { name: 'change' }] });
    expect(log).toEqual(['start r', 'end r']);
    const [w1, w2] = first.done.pending!;

    // Later (another process, after a restart): the history is all it needs.
    const resumed = await run([reply().text('Both handled.')], {
      mode: 'normal',
      state,
      task: undefined,
      messages: first.messages,
      answers: new Map<string, ApprovalAnswer>([
        [w1!.id, { decision: 'once' }],
        [w2!.id, { decision: 'deny' }],
      ]),
    });
    expect(resumed.done).toMatchObject({ reason: 'completed', text: 'Both handled.' });
    expect(log).toEqual(['start r', 'end r', 'start w1', 'end w1']);
    const sent = server!.requests.at(-1)!.body.messages as ChatMessage[];
    expect(sent.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      'look r done',
      'change w1 done',
      expect.stringMatching(/^Error: Not run: the user said no/),
    ]);
  });

  it('corrects a repeated call and stops the run if the loop goes on', async () => {
    const same = () => reply().tool('look', { ms: 0, id: 'same' });
    const r = await run([same(), same(), same(), same(), same(), same(), same(), same(), same()], {
      maxIterations: 20,
    });
    const warnings = r.events.filter((e) => e.type === 'warning');
    expect(warnings).toHaveLength(2);
    expect(r.done).toMatchObject({ reason: 'loop', text: expect.stringContaining('the same call repeated') });
    expect(
      r.messages.filter((m) => m.role === 'user' && m.content.includes('three times in a row')),
    ).toHaveLength(2);
  });

  it('stops when the token budget is spent, warning at 80%', async () => {
    const turn = () => reply().tool('look', { id: 'x', ms: 0 }).usage({ prompt: 300, completion: 10 });
    const r = await run([turn(), turn(), turn(), turn()], { tokenBudget: 1000 });
    expect(r.events.some((e) => e.type === 'warning' && e.message.includes('80%'))).toBe(true);
    expect(r.done).toMatchObject({ reason: 'budget', turns: 4 });
    // The model is told too, after the results of the calls it made (never between calls and results).
    const note = r.messages.findIndex((m) => m.role === 'user' && m.content.includes('80% of your token'));
    expect(note).toBeGreaterThan(0);
    expect(r.messages[note - 1]).toMatchObject({ role: 'tool' });
    expect(r.messages[note - 2]).toMatchObject({ role: 'assistant' });
  });

  it('pushes on while todos are open, a limited number of times', async () => {
    const state = new MemoryState();
    state.set('todos', [{ id: '1', text: 'write tests', status: 'pending' }]);
    const r = await run([reply().text('I am done.'), reply().text('Really done.'), reply().text('Done!')], {
      state,
      todoNudges: 2,
    });
    expect(r.done).toMatchObject({ reason: 'completed', text: 'Done!' });
    expect(r.messages.filter((m) => m.role === 'user' && m.content.includes('write tests'))).toHaveLength(2);
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

  it('stops with reason error when the server keeps failing, recording the failure so roles keep alternating', async () => {
    const r = await run([reply().httpError(400, { body: 'model not loaded' })]);
    expect(r.done).toMatchObject({ reason: 'error', text: expect.stringContaining('model not loaded') });
    expect(r.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant']);
    expect(r.messages.at(-1)).toEqual({
      role: 'assistant',
      content: expect.stringMatching(/^\[no reply: the request failed: .*model not loaded/),
    });
    expect(r.persisted).toEqual(r.messages.slice(1));
  });

  it('aborts mid-stream and keeps a valid history', async () => {
    const controller = new AbortController();
    server = await startScriptedServer();
    // The second request is the one that hangs: abort once the server has it.
    void server.waitForRequests(2).then(() => controller.abort());
    const r = await run([reply().tool('look', { id: 'a', ms: 0 }), reply().hang()], {
      signal: controller.signal,
    });
    expect(r.done).toMatchObject({ reason: 'aborted' });
    expect(r.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(r.messages.at(-1)).toEqual({ role: 'assistant', content: '[interrupted by the user]' });
    expect(r.persisted).toEqual(r.messages.slice(1));
  });

  it('keeps the text streamed before an interruption, so the next task follows an assistant turn', async () => {
    const controller = new AbortController();
    // The server holds the stream after "Half of "; the user interrupts once text has arrived.
    const r = await run([reply().text('Half of my answer, and then more').chunkSize(4).holdAfter(3)], {
      signal: controller.signal,
      onEvent: (e) => e.type === 'text_delta' && controller.abort(),
    });
    expect(r.done).toMatchObject({ reason: 'aborted' });
    const last = r.messages.at(-1)!;
    expect(last.role).toBe('assistant');
    expect(last.content).toMatch(/^Half[\s\S]*\n\n\[interrupted by the user\]$/);
    expect(last.content).not.toContain('more');
  });

  it('strips reasoning from the history it sends back', async () => {
    await run([
      reply().reasoning('secret plan').think('more thoughts').tool('look', { id: 'a', ms: 0 }),
      reply().text('ok'),
    ]);
    const raw = server!.requests[1]!.raw;
    expect(raw).not.toContain('secret plan');
    expect(raw).not.toContain('more thoughts');
  });

  it('sets the sandbox up only once the first request is answered, and waits for it before the first call', async () => {
    let settle: ((choice: SandboxChoice) => void) | undefined;
    const settling = new Promise<SandboxChoice>((resolve) => {
      settle = resolve;
    });
    let asked = 0;
    let wasAsked: (() => void) | undefined;
    const askedFor = new Promise<void>((resolve) => {
      wasAsked = resolve;
    });
    const source = () => {
      asked++;
      wasAsked!();
      return settling;
    };
    server ??= await startScriptedServer();
    const running = run([reply().tool('look', { id: 'a', ms: 0 }).holdAfter(0), reply().text('done')], {
      sandbox: source,
    });
    await server.waitForHolds(1);
    // The request is on the wire and unanswered: the sandbox's probes have not started to slow it.
    expect(asked).toBe(0);
    server.release();
    await askedFor;
    // The model has answered; no tool has run, as the sandbox is not there yet.
    expect(log).toEqual([]);
    settle!({ sandbox: unconfinedSandbox(workspace), reason: 'test', warning: 'weak sandbox' });
    const r = await running;
    expect(r.done).toMatchObject({ reason: 'completed', text: 'done' });
    expect(asked).toBe(1);
    const kinds = r.events.map((e) => e.type);
    expect(kinds.indexOf('warning')).toBeLessThan(kinds.indexOf('tool_call'));
    expect(r.events.filter((e) => e.type === 'warning')).toEqual([
      { type: 'warning', message: 'weak sandbox' },
    ]);
    expect(log).toEqual(['start a', 'end a']);
  });

  it('answers every call with why the sandbox could not be set up, and stops with that error', async () => {
    const r = await run([reply().tool('look', { id: 'a', ms: 0 }).tool('change', { id: 'b', ms: 0 })], {
      sandbox: () => Promise.reject(new Error('docker: the daemon is not running')),
    });
    expect(r.done).toMatchObject({ reason: 'error', text: 'docker: the daemon is not running' });
    expect(log).toEqual([]);
    expect(r.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    expect(r.messages.slice(-2).map((m) => m.content)).toEqual([
      'Error: not run: docker: the daemon is not running',
      'Error: not run: docker: the daemon is not running',
    ]);
    expect(r.persisted).toEqual(r.messages.slice(1));
  });
});
