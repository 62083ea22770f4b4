/**
 * A deferred tool called through `use_tool`, as the built CLI shows it: the terminal rows and the
 * `--json` events name the tool that ran and its arguments, not the wrapper the model used.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('use-tool');

const turns = () => [
  reply().tool('use_tool', { name: 'mkdir', args: { path: 'out/deep' } }),
  reply().tool('use_tool', { name: 'no_such_tool', args: { path: 'x' } }),
  reply().text('Made it.'),
];

it('--json events carry the real tool beside the call the model wrote', async () => {
  await cli.serve({ models: ['m'], turns: turns() });
  const r = await cli.run(['--json', '--yolo', 'make a folder']);
  expect(r.code, r.stderr).toBe(0);
  expect(existsSync(join(cli.workspace, 'out/deep'))).toBe(true);
  const events = r.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const calls = events.filter((e) => e.type === 'tool_call');
  expect(calls[0]).toMatchObject({
    call: { name: 'use_tool' },
    unwrapped: { name: 'mkdir', arguments: '{"path":"out/deep"}' },
  });
  expect(calls[1]).toMatchObject({ unwrapped: { name: 'no_such_tool' } });
  const results = events.filter((e) => e.type === 'tool_result');
  expect(results.map((e) => [e.name, e.ok])).toEqual([
    ['mkdir', true],
    ['no_such_tool', false],
  ]);
  // The model's messages keep what it wrote.
  const sent = cli.server.requests[1]!.body.messages as ChatMessage[];
  const assistant = sent.find((m) => m.role === 'assistant');
  expect(assistant?.role === 'assistant' && assistant.tool_calls?.[0]?.function.name).toBe('use_tool');
});

it('the terminal rows name the real tool', async () => {
  await cli.serve({ models: ['m'], turns: turns() });
  const r = await cli.run(['--yolo', 'make a folder']);
  expect(r.code, r.stderr).toBe(0);
  const rows = r.stderr.split('\n').filter((line) => /^[✓✗] /.test(line));
  expect(rows).toHaveLength(2);
  expect(rows[0]).toMatch(/^✓ .*out\/deep/);
  expect(rows[1]).toMatch(/^✗ no_such_tool x /);
  expect(r.stderr).not.toContain('use_tool');
});
