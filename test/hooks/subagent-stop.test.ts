/**
 * SubagentStop through a real runtime (the sub-agents' harness: config, createRuntime, a stored
 * session, the scripted model): it fires whenever a sub-agent finishes, also when it ends by
 * report_result, with Claude Code's stdin, and its block sends the sub-agent on, once per
 * stop_hook_active, as a Stop hook does for the main agent.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { type Harness, harness } from '../subagents/support.js';
import { reply } from '../support/scripted-server.js';

const script = (name: string) => join(import.meta.dirname, '../fixtures/hooks', name);
const hook = (command: string, matcher?: string) => [
  { ...(matcher ? { matcher } : {}), hooks: [{ type: 'command' as const, command }] },
];

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

it('a report_result fires SubagentStop; its block sends the child on, and the next report ends it', async () => {
  // Outside the workspace: a workspace file a hook command names is pinned, and this one grows.
  const log = join(await mkdtemp(join(tmpdir(), 'hearth-subagent-stop-')), 'stdin.log');
  h = await harness({
    files: { '.hearth/agents/tester.md': '---\ntools: [shell, read_file]\n---\nTest things.' },
    config: {
      hooks: {
        SubagentStop: [
          ...hook(`python3 ${script('subagent-verify.py')}`, 'tester'),
          ...hook(`jq -c . >> ${log}`),
        ],
        Stop: hook(`jq -c . >> ${log}`),
      },
    },
    turns: [
      reply().tool('delegate', { objective: 'Check the build', agent: 'tester' }),
      reply().tool('report_result', { status: 'done', summary: 'Looks fine.' }),
      // Sent back by the hook: the child runs the tests, then reports again.
      reply().tool('shell', { command: 'echo npm test' }),
      reply().tool('report_result', { status: 'done', summary: 'Tests pass.' }),
      reply().text('The build is fine.'),
    ],
  });
  const { done } = await h.run('Is the build fine?');
  expect(done).toMatchObject({ reason: 'completed', text: 'The build is fine.' });
  expect(h.server.requests).toHaveLength(5);
  const sentBack = (h.server.requests[2]!.body.messages as ChatMessage[]).at(-1);
  expect(sentBack).toEqual({ role: 'user', content: 'tester sub-agent: run npm test before you report.' });
  const result = JSON.parse(h.session.messages.find((m) => m.role === 'tool')!.content as string) as Record<
    string,
    unknown
  >;
  expect(result).toMatchObject({ status: 'done', summary: 'Tests pass.' });

  const inputs = (await readFile(log, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(inputs.map((i) => [i.hook_event_name, i.stop_hook_active])).toEqual([
    ['SubagentStop', false],
    ['SubagentStop', true],
    ['Stop', false],
  ]);
  const child = (await (await h.runtime.sessions()).subagents(h.session.id))[0]!;
  expect(inputs[0]).toMatchObject({
    session_id: h.session.id,
    agent_id: child.id,
    agent_type: 'tester',
    last_assistant_message: '',
  });
  expect(inputs[0]!.transcript_path).toMatch(new RegExp(`${h.session.id}\\.jsonl$`));
  expect(inputs[0]!.agent_transcript_path).toMatch(new RegExp(`${child.id}\\.jsonl$`));
  expect(inputs[2]).toMatchObject({ session_id: h.session.id, last_assistant_message: 'The build is fine.' });
  expect(inputs[2]).not.toHaveProperty('agent_id');
  await rm(join(log, '..'), { recursive: true, force: true });
});

it("a SubagentStop hook that always blocks is bounded by the child's turn limit", async () => {
  h = await harness({
    config: {
      subagents: { max_turns: 3 },
      hooks: { SubagentStop: hook(`echo '{"decision": "block", "reason": "Not yet."}'`) },
    },
    turns: [
      reply().tool('delegate', { objective: 'Do it' }),
      reply().tool('report_result', { status: 'done', summary: 'one' }),
      reply().text('two'),
      reply().text('three'),
      reply().text('Gave up waiting.'),
    ],
  });
  await h.run('Go');
  expect(h.server.requests).toHaveLength(5);
  const result = JSON.parse(h.session.messages.find((m) => m.role === 'tool')!.content as string);
  // Sent on at every stop until its turn limit ended it; what it reported still reaches the parent.
  expect(result).toMatchObject({ status: 'done', summary: 'one' });
});
