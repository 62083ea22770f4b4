import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

/** Small seed features through the installed bin: the budget warning, bare calls, the task tree. */
const cli = useCliHarness('acc-seed-tools');

const lastToolResult = (i: number) => {
  const messages = cli.server.requests[i]!.body.messages as Array<{ role: string; content: string }>;
  return messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '';
};

describe('seed tools', () => {
  it('warns at the configured share of the token budget (token_budget_warning)', async () => {
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(
      join(cli.hearthHome, 'config.json'),
      JSON.stringify({ token_budget: 10_000, token_budget_warning: 0.01 }),
    );
    await cli.serve([reply().tool('list_dir', { path: '.' }), reply().text('Done.')]);
    const run = await cli.run(['--json', 'look']);
    expect(run.code).toBe(0);
    const warnings = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; message?: string })
      .filter((e) => e.type === 'warning');
    expect(warnings.map((w) => w.message)).toContainEqual(
      expect.stringMatching(/^1% of the token budget is spent/),
    );
    await writeFile(join(cli.hearthHome, 'config.json'), JSON.stringify({ token_budget_warning: 2 }));
    const bad = await cli.run(['-p', 'x']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('token_budget_warning');
  });

  it('runs a bare Python-style call of a known tool, written with no wrapper (wyrmspire)', async () => {
    await writeFile(join(cli.workspace, 'notes.txt'), 'port 5433\n');
    await cli.serve([reply().text('read_file(path="notes.txt")'), reply().text('The port is 5433.')]);
    const run = await cli.run(['--json', 'what port?']);
    expect(run.code).toBe(0);
    expect(lastToolResult(1)).toContain('port 5433');
    expect(run.stdout).toContain('"type":"tool_call"');
  });

  it('shows a task tree: todos whose ids extend another nest beneath it', async () => {
    await cli.serve([
      reply().tool('todo_write', {
        todos: [
          { id: '1', text: 'Research' },
          { id: '1.1', text: 'Find sources', status: 'done' },
          { id: '2', text: 'Write' },
        ],
      }),
      reply().text('Planned.'),
    ]);
    const run = await cli.run(['plan it']);
    expect(run.code).toBe(0);
    expect(lastToolResult(1)).toBe('[ ] 1. Research\n  [x] 1.1. Find sources\n[ ] 2. Write\n1/3 done');
  });
});
