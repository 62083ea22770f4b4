import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('e2e');
const git = (...args: string[]) => execFileSync('git', args, { cwd: cli.workspace, encoding: 'utf8' }).trim();

describe('the full tool set end to end (built CLI)', () => {
  it('finds, greps, edits with a sloppy indent and commits', async () => {
    git('init', '-q');
    git('config', 'user.name', 'Test User');
    git('config', 'user.email', 'test@example.com');
    await mkdir(join(cli.workspace, 'src'));
    await writeFile(
      join(cli.workspace, 'src', 'math.js'),
      'export function add(a, b) {\n    return a - b;\n}\n',
    );
    await writeFile(join(cli.workspace, 'src', 'util.js'), 'export const id = (x) => x;\n');
    git('add', '.');
    git('commit', '-qm', 'initial');

    await cli.serve({
      models: ['m'],
      turns: [
        reply().tool('glob', { pattern: '*.js' }),
        reply().tool('grep', { pattern: 'a - b', glob: '*.js' }),
        // The model gets the indentation wrong; the tolerant matcher still finds the one place.
        reply().tool('edit_file', {
          path: 'src/math.js',
          old_string: 'export function add(a, b) {\n  return a - b;\n}',
          new_string: 'export function add(a, b) {\n  return a + b;\n}',
        }),
        reply().tool('git_commit', { message: 'Fix add', all: true }),
        reply().text('Fixed add() and committed.'),
      ],
    });
    const r = await cli.run(['--yolo', '--tools', 'default,git', 'fix the add function and commit']);
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(join(cli.workspace, 'src', 'math.js'), 'utf8')).toBe(
      'export function add(a, b) {\n    return a + b;\n}\n',
    );
    expect(git('log', '--format=%s')).toBe('Fix add\ninitial');
    expect(git('status', '--porcelain')).toBe('');

    const offered = (cli.server.requests[0]!.body.tools as Array<{ function: { name: string } }>).map(
      (t) => t.function.name,
    );
    expect(offered).toContain('git_commit');
    const results = (cli.server.requests[4]!.body.messages as ChatMessage[])
      .filter((m) => m.role === 'tool')
      .map((m) => m.content);
    expect(results[0]!.split('\n').sort()).toEqual(['src/math.js', 'src/util.js']);
    expect(results[1]).toBe('src/math.js:2:    return a - b;');
    expect(results[2]).toMatch(/^Edited src\/math\.js \(strategy: indentation, line 1\)/);
    expect(results[2]).toContain('-    return a - b;\n+    return a + b;');
    expect(results[3]).toMatch(/Fix add/);
  });

  it('offers only the tools asked for, and reports the prompt size', async () => {
    await cli.serve({ models: ['m'], turns: [reply().text('ok')] });
    await mkdir(join(cli.workspace, '.hearth'));
    await writeFile(
      join(cli.workspace, '.hearth', 'config.json'),
      JSON.stringify({ tools: { disabled: ['shell', 'todo'] } }),
    );
    const r = await cli.run(['hello']);
    expect(r.code).toBe(0);
    const offered = (cli.server.requests[0]!.body.tools as Array<{ function: { name: string } }>).map(
      (t) => t.function.name,
    );
    expect(offered).toEqual([
      'read_file',
      'write_file',
      'edit_file',
      'list_dir',
      'glob',
      'grep',
      'git_status',
      'git_diff',
      'git_log',
      'get_time',
      'tool_search',
      'use_tool',
    ]);
    // Disabled tools are not even behind the index.
    const index = (cli.server.requests[0]!.body.tools as Array<{ function: { description: string } }>).at(
      -2,
    )!;
    expect(index.function.description).not.toMatch(/\b(shell|todo_list)\b/);

    const size = await cli.run(['debug', 'prompt']);
    expect(size.code).toBe(0);
    expect(size.stdout).toMatch(/^system prompt\s+\d+\s+\d+$/m);
    expect(size.stdout).toMatch(/^grep\s+\d+\s+\d+$/m);
    expect(size.stdout).not.toMatch(/^shell/m);
    const json = await cli.run(['debug', 'prompt', '--json', '--tools', 'default']);
    const parsed = JSON.parse(json.stdout) as { total: { tokens: number }; tools: Array<{ name: string }> };
    expect(parsed.tools.map((t) => t.name)).toContain('shell');
    expect(parsed.tools.map((t) => t.name)).toContain('tool_search');
    expect(parsed.total.tokens).toBeLessThan(1500);

    const bad = await cli.run(['--tools', 'nope', 'hi']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/Unknown tool or group "nope"/);
  });

  it('keeps todos with the session: shown as they change, there again after --resume', async () => {
    await cli.serve({
      models: ['m'],
      turns: [
        reply().tool('todo_write', {
          todos: [
            { text: 'read the code', status: 'done' },
            { text: 'write the fix', status: 'in_progress' },
          ],
        }),
        reply().text('Started.'),
        reply().tool('todo_list', {}),
        reply().text('Still on it.'),
      ],
    });
    const first = await cli.run(['plan the work']);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('[x] 1. read the code');
    expect(first.stderr).toContain('[>] 2. write the fix');
    const id = /hearth --resume (\w+)/.exec(first.stderr)![1]!;

    const second = await cli.run(['--resume', id, '--tools', 'default,todo_list', 'where are we?']);
    expect(second.code).toBe(0);
    const resumed = cli.server.requests[2]!.body.messages as ChatMessage[];
    // The resumed request starts with the whole first conversation, unchanged.
    expect(resumed.slice(0, 4)).toEqual(cli.server.requests[1]!.body.messages);
    expect(resumed.slice(4)).toEqual([
      { role: 'assistant', content: 'Started.' },
      { role: 'user', content: 'where are we?' },
    ]);
    const messages = cli.server.requests[3]!.body.messages as ChatMessage[];
    expect(messages.at(-1)).toMatchObject({
      role: 'tool',
      content: expect.stringContaining('[>] 2. write the fix'),
    });

    const list = await cli.run(['sessions']);
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain('plan the work');
  });
});
