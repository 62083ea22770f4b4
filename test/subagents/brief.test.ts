/**
 * The brief keeps a child's context small whatever its parent has been through: the call, the
 * project's notes and the todo item it serves, each within its share of a fixed budget.
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterEach, expect, it } from 'vitest';
import { estimateTokens } from '../../src/llm/tokens.js';
import { BRIEF_TOKENS, buildBrief } from '../../src/subagents/brief.js';
import { MemoryState } from '../../src/tools/types.js';
import { reply } from '../support/scripted-server.js';
import { firstUserMessage, type Harness, harness } from './support.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** What a request costs in a real tokenizer: its messages and its tool schemas, as sent. */
const requestTokens = (body: { messages: unknown; tools?: unknown }) =>
  countTokens(JSON.stringify({ messages: body.messages, tools: body.tools ?? [] }));

it("a child's first request stays under 2,500 tokens while the parent's history is over 50,000", async () => {
  const notes = `# Project notes\n\n${'Run npm test before committing. Keep functions small and named for what they do. '.repeat(60)}`;
  const log = Array.from({ length: 6000 }, (_, i) => `line ${i}: request served in ${(i * 7) % 97} ms`).join(
    '\n',
  );
  h = await harness({
    config: { context_window: 400_000 },
    files: { 'AGENTS.md': notes },
    turns: [
      reply().tool('todo_write', { todos: [{ text: 'Find the slowest endpoint', status: 'in_progress' }] }),
      reply().tool('delegate', {
        objective: 'Find which endpoint is slowest in logs/access.log',
        deliverable_type: 'text',
        deliverable_description: 'the endpoint and its worst time',
        data_hint: 'times are in ms; ignore health checks',
      }),
      reply().tool('report_result', { status: 'done', summary: '/search, 96 ms' }),
      reply().text('The slowest endpoint is /search.'),
    ],
  });
  const { done } = await h.run(`Here is the whole access log; find the slowest endpoint.\n\n${log}`);
  expect(done.reason).toBe('completed');

  const [, parent, child] = h.server.requests;
  expect(requestTokens(parent!.body)).toBeGreaterThan(50_000);
  expect(requestTokens(child!.body)).toBeLessThan(2_500);
  const brief = firstUserMessage(child!);
  expect(brief).toContain('Objective: Find which endpoint is slowest in logs/access.log');
  expect(brief).toContain('Deliverable: text: the endpoint and its worst time');
  expect(brief).toContain('Data: times are in ms; ignore health checks');
  expect(brief).toContain("It serves this item of the parent's todo list: Find the slowest endpoint");
  expect(brief).not.toContain('line 1:');
  // The project's notes come along, cut to their share.
  const system = (child!.body.messages as Array<{ content: string }>)[0]!.content;
  const shown = /## Project notes \(AGENTS\.md\)\n([\s\S]*?)(?:\n\n## |$)/.exec(system)?.[1] ?? '';
  expect(shown.startsWith('# Project notes')).toBe(true);
  expect(shown.endsWith('…')).toBe(true);
  expect(shown.length).toBeLessThan(notes.length);
});

it('keeps every part of the brief within its share, however much the call carries', () => {
  const huge = (word: string) => `${word} `.repeat(20_000);
  const dependencies = Array.from({ length: 12 }, (_, i) => ({
    taskId: `t${i}`,
    status: 'done' as const,
    summary: huge('result'),
    deliverables: [`out${i}.txt`],
    usage: { prompt: 0, completion: 0 },
  }));
  const state = new MemoryState();
  state.set('todos', [{ id: '1', text: huge('todo'), status: 'in_progress' }]);
  const brief = buildBrief({
    task: {
      objective: huge('objective'),
      deliverable: { type: 'file', path: 'out.txt', description: huge('description') },
      dataHint: huge('hint'),
      dependsOn: [],
    },
    workspace: '/work',
    context: { notes: { file: 'AGENTS.md', text: huge('note') } },
    definition: {
      name: 'writer',
      description: '',
      instructions: huge('role'),
      file: '.hearth/agents/writer.md',
    },
    parentState: state,
    dependencies,
    reportTool: 'report_result',
  });
  const base = buildBrief({
    task: { objective: 'x', deliverable: { type: 'text' }, dependsOn: [] },
    workspace: '/work',
    context: {},
    parentState: new MemoryState(),
    dependencies: [],
    reportTool: 'report_result',
  });
  // What the call, the notes and the role add on top of the fixed prompt stays within the budget.
  const added =
    estimateTokens(brief.systemPrompt) +
    estimateTokens(brief.message) -
    (estimateTokens(base.systemPrompt) + estimateTokens(base.message));
  expect(added).toBeLessThanOrEqual(BRIEF_TOKENS);
  for (const part of [
    'Objective: objective',
    'Deliverable: a file at out.txt: description',
    'Data: hint',
    'todo list: todo',
    '- t11 (done): result',
  ])
    expect(brief.message).toContain(part);
  expect(brief.systemPrompt).toContain('## Your role: writer\nrole');
});
