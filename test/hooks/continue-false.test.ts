/**
 * `continue: false` from a hook of any event, through a real runtime (config, createRuntime, a
 * stored session, the scripted model, the corpus scripts as processes): the run stops after the
 * hook, ends `blocked` with the `stopReason` for the user, and the model is never told the reason.
 * Claude Code's hooks reference, "Common JSON fields" (test/fixtures/hooks/README.md).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { toWire } from '../../src/cluster/wire.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { type Harness, harness } from '../subagents/support.js';
import { reply } from '../support/scripted-server.js';

const script = (name: string) => join(import.meta.dirname, '../fixtures/hooks', name);
const hook = (command: string, matcher?: string) => [
  { ...(matcher ? { matcher } : {}), hooks: [{ type: 'command' as const, command }] },
];

let h: Harness | undefined;
let outside: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (outside) await rm(outside, { recursive: true, force: true });
  outside = undefined;
});

/** Every request's text, to show a reason never reached the model. */
const sentText = () => JSON.stringify(h!.server.requests.map((r) => r.body.messages));
const toolResults = () =>
  h!.session.messages.filter((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool');

it('PreToolUse: the call does not run, the rest of the turn is skipped, and the run ends', async () => {
  outside = await mkdtemp(join(tmpdir(), 'hearth-halt-'));
  const flag = join(outside, 'halt');
  await writeFile(flag, 'deploy in progress');
  h = await harness({
    config: { hooks: { PreToolUse: hook(`HALT_FLAG=${flag} ${script('halt-on-flag.sh')}`) } },
    turns: [
      reply()
        .tool('write_file', { path: 'a.txt', content: 'a' })
        .tool('write_file', { path: 'b.txt', content: 'b' }),
    ],
  });
  const { done, events } = await h.run('write two files');
  expect(done).toMatchObject({
    reason: 'blocked',
    text: 'A PreToolUse hook stopped the run: Halted by the kill switch: deploy in progress',
  });
  expect(existsSync(join(h.workspace, 'a.txt'))).toBe(false);
  expect(existsSync(join(h.workspace, 'b.txt'))).toBe(false);
  expect(h.server.requests).toHaveLength(1);
  expect(toolResults().map((m) => m.content)).toEqual([
    'Error: Not run: a hook ended the run here, and the user was told why.',
    'Error: Not run: a hook ended the run here, and the user was told why.',
  ]);
  expect(events.filter((e) => e.type === 'tool_result')).toHaveLength(2);

  // The session goes on once the switch is off; the model never read the reason.
  await rm(flag);
  h.server.push(reply().text('Stopped earlier; nothing was written.'));
  const again = await h.run('what happened?');
  expect(again.done.reason).toBe('completed');
  expect(sentText()).toContain('Not run: a hook ended the run here');
  expect(sentText()).not.toContain('deploy in progress');
});

it('PostToolUse: the call that reaches the budget keeps its result, then the run stops', async () => {
  outside = await mkdtemp(join(tmpdir(), 'hearth-budget-'));
  h = await harness({
    config: {
      hooks: {
        PostToolUse: hook(
          `CALL_BUDGET=2 CALL_BUDGET_FILE=${join(outside, 'budget.json')} python3 ${script('call-budget.py')}`,
        ),
      },
    },
    turns: [
      reply().tool('write_file', { path: 'a.txt', content: 'a' }),
      reply()
        .tool('write_file', { path: 'b.txt', content: 'b' })
        .tool('write_file', { path: 'c.txt', content: 'c' }),
      reply().text('never asked'),
    ],
  });
  const { done, events } = await h.run('write files');
  expect(done).toMatchObject({
    reason: 'blocked',
    text: 'A PostToolUse hook stopped the run: Tool-call budget of 2 reached; review before going on.',
  });
  expect(events).toContainEqual({ type: 'warning', message: 'One tool call left of 2.' });
  expect(existsSync(join(h.workspace, 'b.txt'))).toBe(true);
  expect(existsSync(join(h.workspace, 'c.txt'))).toBe(false);
  expect(toolResults().at(-1)!.content).toBe(
    'Error: Not run: a hook ended the run here, and the user was told why.',
  );
  expect(h.server.requests).toHaveLength(2);
  expect(sentText()).not.toContain('budget');
});

it('SessionStart: the model is never asked, and the warning reaches the user', async () => {
  h = await harness({
    files: { '.release-freeze': 'Friday' },
    config: { hooks: { SessionStart: hook(script('maintenance-window.sh')) } },
    turns: [reply().text('never asked')],
  });
  const { done, events } = await h.run('start work');
  expect(done).toMatchObject({
    reason: 'blocked',
    text: 'A SessionStart hook stopped the run: Release freeze until Friday; no agent sessions.',
  });
  expect(events).toContainEqual({ type: 'warning', message: 'Repository frozen.' });
  expect(h.server.requests).toHaveLength(0);
});

it('PreCompact: automatic compaction is refused and the run stops before the request', async () => {
  h = await harness({
    config: { context_window: 64, hooks: { PreCompact: hook(script('no-compact.sh')) } },
    turns: [reply().text('never asked')],
  });
  const { done } = await h.run('a task long enough to pass three quarters of a tiny window');
  expect(done).toMatchObject({
    reason: 'blocked',
    text: 'A PreCompact hook stopped the run: Context is full: start a new session instead of compacting.',
  });
  expect(h.server.requests).toHaveLength(0);
  // A manual compaction is the user's own request: no-compact.sh lets it be.
  const stopAll = await harness({
    config: { hooks: { PreCompact: hook(`echo '{"continue": false, "stopReason": "No."}'`) } },
    turns: [reply().text('one'), reply().text('two')],
  });
  try {
    await stopAll.run('first');
    await stopAll.run('second');
    await expect(stopAll.session.compact()).rejects.toThrow('A PreCompact hook stopped the compaction: No.');
  } finally {
    await stopAll.close();
  }
});

it('Notification: in an unattended run nobody is asked, and the run ends', async () => {
  const asked: string[] = [];
  h = await harness({
    config: {
      permissions: { mode: 'normal' },
      hooks: { Notification: hook(`CI=1 ${script('unattended.sh')}`) },
    },
    approve: async (request) => {
      asked.push(request.summary);
      return { decision: 'once' };
    },
    turns: [reply().tool('write_file', { path: 'a.txt', content: 'a' }), reply().text('never asked')],
  });
  const { done, events } = await h.run('write a file');
  expect(asked).toEqual([]);
  expect(events.some((e) => e.type === 'approval_request')).toBe(false);
  expect(done.reason).toBe('blocked');
  expect(done.text).toMatch(
    /^A Notification hook stopped the run: Unattended run, nobody to answer: Hearth needs your permission: /,
  );
  expect(existsSync(join(h.workspace, 'a.txt'))).toBe(false);
  expect(h.server.requests).toHaveLength(1);
});

it('the web view shows the stopReason the gateway sends', async () => {
  // web/ type-checks against the DOM (its own tsconfig), so its pure view module is loaded untyped.
  const viewModule = '../../web/src/view.js';
  const { apply, emptyView } = (await import(viewModule)) as {
    apply(view: unknown, event: unknown): { items: Array<{ kind: string; text?: string }> };
    emptyView: unknown;
  };
  const text = 'A PreToolUse hook stopped the run: Halted by the kill switch: deploy';
  const wire = toWire(
    { type: 'done', reason: 'blocked', text, turns: 1 },
    { model: 'm', mode: 'bounded', maxIterations: 5, usage: { prompt: 0, completion: 0 } },
  );
  expect(apply(emptyView, wire).items.at(-1)).toMatchObject({ kind: 'notice', text });
});
