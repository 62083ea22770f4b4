/**
 * Steering the pipeline from the conversation, through the built CLI and the scripted model: the
 * pipeline tools wait behind the index where the workspace has a pipeline (and are not there
 * where it has none), act through a real agent session, ask like any change, and `/pipeline` in
 * the REPL shows the status with the latest transitions.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import type { JournalEntry } from '../../src/pipeline/journal.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('pipeline-steer');

const PLAN = '# Tidy the docs\n\nFix the typos in README.md.';

const offered = (body: Record<string, unknown>) =>
  (body.tools as Array<{ function: { name: string; description: string } }>).map((t) => t.function);

const toolResults = (body: Record<string, unknown>) =>
  (body.messages as ChatMessage[]).filter((m) => m.role === 'tool').map((m) => String(m.content));

describe('the pipeline tools in an agent session', () => {
  it('are not there without a pipeline', async () => {
    const server = await cli.serve([reply().text('Hello.')]);
    const r = await cli.run(['hello']);
    expect(r.code, r.stderr).toBe(0);
    const tools = offered(server.requests[0]!.body);
    expect(tools.map((t) => t.name)).not.toContain('pipeline_status');
    expect(JSON.stringify(tools)).not.toContain('pipeline_status');
  });

  it('wait behind the index where there is a pipeline, store a plan once, retry and pause it', async () => {
    await mkdir(join(cli.workspace, 'plans'));
    const use = (name: string, args: object = {}) => reply().tool('use_tool', { name, args });
    const server = await cli.serve([
      reply().tool('tool_search', { query: 'pipeline plan' }),
      use('pipeline_status'),
      use('plan_create', { markdown: PLAN }),
      use('plan_create', { markdown: `${PLAN}\n` }),
      use('pipeline_retry_failed'),
      use('pipeline_pause'),
      use('pipeline_status'),
      reply().text('Queued and paused.'),
    ]);
    const r = await cli.run(['--yolo', 'queue the docs plan and pause the pipeline']);
    expect(r.code, r.stderr).toBe(0);

    const first = offered(server.requests[0]!.body);
    // Not in the direct set; found through the index (whose description names only as many
    // tools as fit its cap: the rest are counted there and found by a search).
    expect(first.map((t) => t.name)).not.toContain('plan_create');
    const [found, ...results] = toolResults(server.requests.at(-1)!.body);
    for (const name of ['pipeline_status', 'plan_create', 'pipeline_retry_failed', 'pipeline_pause'])
      expect(found).toContain(name);

    expect(results[0]).toBe('No plans in this workspace (add one: hearth plan add FILE.md).');
    expect(results[1]).toMatch(/^Stored plan #1: Tidy the docs\./);
    // The same content (up to surrounding whitespace) is recognised.
    expect(results[2]).toBe('This plan is stored already as #1 (new); nothing added.');
    expect(results[3]).toBe('No failed tasks.');
    expect(results[4]).toBe('Paused.');
    expect(results[5]).toMatch(/^Paused: running workers finish their step[\s\S]*#1 Tidy the docs \[new\]/);

    // The same store and flag the CLI reads; each change recorded as an event.
    const status = await cli.run(['pipeline', 'status']);
    expect(status.stdout).toMatch(/^Paused:.*\n#1 Tidy the docs \[new\]/);
    const events = (await cli.run(['pipeline', 'events', '--json'])).stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as JournalEntry).event);
    expect(events).toEqual([
      { type: 'plan_added', planId: 1, created: true },
      { type: 'plan_added', planId: 1, created: false },
      { type: 'paused' },
    ]);
  });

  it('ask before changing anything: with nobody to answer, only the status runs', async () => {
    await mkdir(join(cli.workspace, 'plans'));
    const use = (name: string, args: object = {}) => reply().tool('use_tool', { name, args });
    const server = await cli.serve([
      use('plan_create', { markdown: PLAN }),
      use('pipeline_pause'),
      use('pipeline_status'),
      reply().text('I could not.'),
    ]);
    const r = await cli.run(['queue a plan']);
    // 4: calls were declined because no terminal could ask.
    expect(r.code, r.stderr).toBe(4);
    const results = toolResults(server.requests.at(-1)!.body);
    expect(results[0]).toMatch(/^Error: Not run: nobody could be asked/);
    expect(results[1]).toMatch(/^Error: Not run: nobody could be asked/);
    expect(results[2]).toBe('No plans in this workspace (add one: hearth plan add FILE.md).');
    expect((await cli.run(['pipeline', 'status'])).stdout).not.toMatch(/Paused/);
  });
});

describe('/pipeline in the REPL', () => {
  it('shows plans, tasks by state and the latest transitions', async () => {
    await writeFile(join(cli.home, 'plan.md'), PLAN);
    await cli.serve([]);
    expect((await cli.run(['plan', 'add', join(cli.home, 'plan.md')])).code).toBe(0);
    expect((await cli.run(['pipeline', 'pause'])).code).toBe(0);
    const term = await cli.repl([]);
    const shown = await term.enter('/pipeline');
    expect(shown).toMatch(/Paused: running workers finish their step/);
    expect(shown).toMatch(/#1 Tidy the docs \[new\]\s+— 0 tokens/);
    expect(shown).toMatch(/Recent:\s+[\s\S]*plan #1 added from .*plan\.md[\s\S]*pipeline paused/);
    expect(await term.enter('/help')).toContain('/pipeline');
    term.send('/exit\r');
    expect(await term.exited).toBe(0);
  });
});
