/**
 * Sub-agents as a person and a script see them through the built CLI: one-shot lines on stderr,
 * every event with --json, the session tree in `hearth sessions`, Ctrl+C, the REPL's blocks and
 * /agents, and an approval question that names the child asking.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { useCliHarness } from '../support/cli-harness.js';
import { atPrompt } from '../support/pty.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('subagents-cli');

beforeEach(async () => {
  await writeFile(join(cli.workspace, 'notes.txt'), 'alpha\nbeta\n');
});

const report = (summary: string) => reply().tool('report_result', { status: 'done', summary });

/** A root that splits the work in two: one child reads and reports, the other only answers. */
const twoTasks = () => [
  reply().tool('decompose', {
    tasks: [
      { task_id: 'count', objective: 'Count the lines of notes.txt' },
      { task_id: 'first', objective: 'Name the first word of notes.txt' },
    ],
  }),
  reply().tool('read_file', { path: 'notes.txt' }),
  report('notes.txt has 2 lines.'),
  reply().text('The first word is alpha.'),
  reply().text('Two lines; the first word is alpha.'),
];

const sessionIdOf = (stderr: string) => /session ([0-9a-f]+) · continue with/.exec(stderr)?.[1];

function jsonEvents(stdout: string): AgentEvent[] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as AgentEvent);
}

describe('sub-agents in one-shot mode', () => {
  it('show as indented lines on stderr, and the answer alone on stdout', async () => {
    await cli.serve(twoTasks());
    const r = await cli.run(['--deep', '--yolo', 'Look at the notes']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('Two lines; the first word is alpha.\n');

    const lines = r.stderr.split('\n');
    const at = (pattern: RegExp) => {
      const index = lines.findIndex((line) => pattern.test(line));
      expect(index, `${pattern} in:\n${r.stderr}`).toBeGreaterThanOrEqual(0);
      return index;
    };
    const start1 = at(/^⤷ sub-agent [0-9a-f]+ count · Count the lines of notes\.txt$/);
    const read = at(/^ {2}✓ .*notes\.txt/);
    const end1 = at(/^✓ sub-agent done: notes\.txt has 2 lines\. · 2 calls · [\d.]+k? tokens$/);
    const start2 = at(/^⤷ sub-agent [0-9a-f]+ first · Name the first word of notes\.txt$/);
    // It ended without report_result: its answer comes back as a partial result.
    const end2 = at(/^◐ sub-agent partial: The first word is alpha\. · 0 calls/);
    const order = [start1, read, end1, start2, end2];
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it('--json prints every sub-agent event: start, the tagged inner events, end with usage', async () => {
    await cli.serve([
      reply().tool('delegate', { objective: 'Summarise notes.txt' }).usage({ prompt: 500, completion: 20 }),
      reply().tool('delegate', { objective: 'Read notes.txt aloud' }).usage({ prompt: 300, completion: 10 }),
      reply().tool('read_file', { path: 'notes.txt' }).usage({ prompt: 200, completion: 5 }),
      report('It says alpha, beta.').usage({ prompt: 250, completion: 5 }),
      report('A two-word list.').usage({ prompt: 350, completion: 10 }),
      reply().text('The notes are a two-word list.').usage({ prompt: 600, completion: 10 }),
    ]);
    const r = await cli.run(['--deep', '--yolo', '--json', 'What are the notes?']);
    expect(r.code, r.stderr).toBe(0);
    const events = jsonEvents(r.stdout);
    const root = events.find((e) => e.type === 'session');
    const rootId = root?.type === 'session' ? root.id : 'missing';
    const rootCall = events.find((e) => e.type === 'tool_call');
    const starts = events.filter((e) => e.type === 'subagent_start');
    expect(starts).toEqual([
      {
        type: 'subagent_start',
        id: expect.stringMatching(/^[0-9a-f]+$/),
        parentId: rootId,
        parentCallId: rootCall?.type === 'tool_call' ? rootCall.call.id : 'missing',
        depth: 1,
        objective: 'Summarise notes.txt',
      },
      expect.objectContaining({ parentId: starts[0]?.id, depth: 2, objective: 'Read notes.txt aloud' }),
    ]);
    const [child, grandchild] = starts.map((s) => s.id);
    // The grandchild's events travel flat, tagged with its own id and depth.
    const inner = events.filter((e) => e.type === 'subagent_event' && e.id === grandchild);
    expect(inner.every((e) => e.type === 'subagent_event' && e.depth === 2)).toBe(true);
    expect(inner.map((e) => e.type === 'subagent_event' && e.event.type)).toEqual(
      expect.arrayContaining(['turn_start', 'tool_call', 'tool_result', 'usage', 'done']),
    );
    const ends = events.filter((e) => e.type === 'subagent_end');
    expect(ends).toEqual([
      {
        type: 'subagent_end',
        id: grandchild,
        status: 'done',
        summary: 'It says alpha, beta.',
        usage: { prompt: 450, completion: 10 },
      },
      // The child's usage includes its own child's.
      {
        type: 'subagent_end',
        id: child,
        status: 'done',
        summary: 'A two-word list.',
        usage: { prompt: 1100, completion: 30 },
      },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'completed' });
  });

  it('Ctrl+C stops the running child, keeps its session, and starts no further task', async () => {
    await cli.serve([
      reply().tool('decompose', {
        tasks: [
          { task_id: 'slow', objective: 'Think about notes.txt' },
          { task_id: 'later', objective: 'Write a reply', depends_on: [] },
        ],
      }),
      reply().hang(),
    ]);
    const run = cli.start(['--deep', '--yolo', '--json', 'Ponder the notes']);
    // The child's request hangs and the CLI's timeouts are long: only the abort ends it.
    await cli.server.waitForRequests(2);
    run.child.kill('SIGINT');
    const r = await run.result;
    expect(r.code).toBe(130);
    const events = jsonEvents(r.stdout);
    const starts = events.filter((e) => e.type === 'subagent_start');
    expect(starts.map((e) => e.type === 'subagent_start' && e.taskId)).toEqual(['slow']);
    expect(events.filter((e) => e.type === 'subagent_end')).toEqual([
      expect.objectContaining({
        id: starts[0]!.id,
        status: 'partial',
        summary: 'Interrupted before it finished.',
      }),
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'aborted' });

    const show = await cli.run(['sessions', 'show', starts[0]!.id]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain('Think about notes.txt');
  });
});

describe('the session tree', () => {
  it('hearth sessions lists each child under its parent; sessions show links them both ways', async () => {
    await cli.serve(twoTasks());
    const r = await cli.run(['--deep', '--yolo', 'Look at the notes']);
    expect(r.code, r.stderr).toBe(0);
    const root = sessionIdOf(r.stderr)!;
    expect(root, r.stderr).toBeDefined();

    const listed = await cli.run(['sessions']);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = listed.stdout.trimEnd().split('\n').slice(1);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatch(new RegExp(`^${root} .*  Look at the notes`));
    expect(rows[1]).toMatch(/^[0-9a-f]+ .* {2}└ Count the lines of notes\.txt/);
    expect(rows[2]).toMatch(/^[0-9a-f]+ .* {2}└ Name the first word of notes\.txt/);
    const [count, first] = rows.slice(1).map((row) => row.split(' ')[0]!);

    const parent = await cli.run(['sessions', 'show', root]);
    expect(parent.stdout).toContain('- sub-agents:');
    expect(parent.stdout).toContain(`  - ${count} (completed): Count the lines of notes.txt`);
    expect(parent.stdout).toContain(`  - ${first} (completed): Name the first word of notes.txt`);
    const child = await cli.run(['sessions', 'show', count!]);
    expect(child.stdout).toContain(`- sub-agent (depth 1) of: ${root}`);
    expect(child.stdout).toContain('Objective: Count the lines of notes.txt');
  });
});

describe('sub-agents in the REPL', () => {
  it('show a live status line, fold a finished child into its end line, and /agents shows the tree', async () => {
    const turns = twoTasks();
    // The first child's first answer waits until the test has seen the status line.
    turns[1] = reply().tool('read_file', { path: 'notes.txt' }).holdAfter(0);
    await cli.serve(turns);
    const term = cli.terminal(['--deep', '--yolo'], { size: { cols: 120, rows: 40 } });
    await term.waitFor(atPrompt);
    const since = term.screen.length;
    term.send('Look at the notes\r');
    await cli.server.waitForHolds(1);
    await term.waitFor(/⤷ sub-agent · waiting for the model \(turn 1\)/, undefined, since);
    cli.server.release();
    await term.waitFor(atPrompt, undefined, since);
    const shown = term.screen.slice(since);
    expect(shown).toContain('⤷ sub-agent');
    expect(shown).toMatch(/ {2}✓ .*notes\.txt/);
    // The first child's block (start line and two call rows) is erased, then its end line written.
    expect(shown).toMatch(
      /\x1b\[3A\r\x1b\[J(?:\x1b\[[0-9;]*m)*✓(?:\x1b\[[0-9;]*m)* sub-agent done: notes\.txt has 2 lines\./,
    );
    expect(shown).toContain('Two lines; the first word is alpha.');

    const agents = await term.enter('/agents');
    expect(agents).toMatch(/[0-9a-f]+ {2}completed +Count the lines of notes\.txt/);
    expect(agents).toMatch(/[0-9a-f]+ {2}completed +Name the first word of notes\.txt/);
  });

  it("asks the same person about a child's call, naming the child", async () => {
    await cli.serve([
      reply().tool('delegate', { objective: 'Write hello.txt' }),
      reply().tool('write_file', { path: 'hello.txt', content: 'hi\n' }),
      report('Wrote hello.txt.'),
      reply().text('Done.'),
    ]);
    const term = cli.terminal(['--deep'], { size: { cols: 120, rows: 40 } });
    await term.waitFor(atPrompt);
    const since = term.screen.length;
    term.send('Make hello.txt\r');
    await term.waitFor(/\[sub-agent: Write hello\.txt\].*hello\.txt/, undefined, since);
    await term.waitFor(/Allow\?/, undefined, since);
    term.send('y');
    await term.waitFor(/Done\./, undefined, since);
    expect(await readFile(join(cli.workspace, 'hello.txt'), 'utf8')).toBe('hi\n');
  });
});
