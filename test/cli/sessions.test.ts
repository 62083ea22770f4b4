/**
 * Session round trips through the built CLI: list, show, export, fork, resume, continue, remove,
 * with what the commands print checked against what the database really holds.
 */
import { mkdtemp, readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import type { CliResult } from '../support/cli.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply, type TurnInput } from '../support/scripted-server.js';
import { historyProblems, withPeek } from '../support/store-peek.js';

const cli = useCliHarness('sessions');
let elsewhere: string;

beforeEach(async () => {
  elsewhere = await cli.tempDir('sessions-other');
  await cli.serve({ models: ['m'] });
  await writeFile(join(cli.workspace, 'notes.txt'), 'alpha\nbeta\n');
});

const dbPath = () => join(cli.hearthHome, 'hearth.db');
const hearth = (args: string[], cwd = cli.workspace): Promise<CliResult> => cli.run(args, { cwd });

/** The two-turn run most tests start from: read a file, then answer. 300 tokens in all. */
const readNotes = (): TurnInput[] => [
  reply()
    .text('Reading the notes.')
    .tool('read_file', { path: 'notes.txt' })
    .usage({ prompt: 100, completion: 20 }),
  reply().text('The notes say alpha and beta.').usage({ prompt: 150, completion: 30 }),
];

/** Runs a task to completion; returns the result and the session id it reports. */
async function runTask(args: string[], turns: TurnInput[], cwd = cli.workspace) {
  cli.server.push(...turns);
  const r = await hearth(['--yolo', ...args], cwd);
  expect(r.code, r.stderr).toBe(0);
  const id = /session ([0-9a-f]+) · continue with: hearth --resume \1/.exec(r.stderr)?.[1];
  expect(id, r.stderr).toBeDefined();
  return { ...r, id: id! };
}

const messagesOf = (id: string): ChatMessage[] => withPeek(dbPath(), (peek) => peek.messages(id));

function parseJsonl(text: string) {
  expect(text.endsWith('\n')).toBe(true);
  const [header, ...rest] = text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(rest.every((m) => m.type === 'message')).toBe(true);
  const messages = rest.map(({ type: _type, ...m }) => m as ChatMessage);
  return { header: header!, messages };
}

async function exportJsonl(id: string) {
  const r = await hearth(['sessions', 'export', id, '--format', 'jsonl']);
  expect(r.code, r.stderr).toBe(0);
  return { text: r.stdout, ...parseJsonl(r.stdout) };
}

/** Splits a `hearth sessions` table row on its column gaps (two or more spaces). */
const cells = (row: string) => row.trim().split(/\s{2,}/);
const DATE = /^\d{4}-\d\d-\d\d \d\d:\d\d$/;

describe('hearth sessions (built CLI)', () => {
  it('lists the sessions of this workspace with id, title, turns and tokens; --all shows the others', async () => {
    const mine = await runTask(['read the notes'], readNotes());
    const theirs = await runTask(
      ['say hello'],
      [reply().text('Hello.').usage({ prompt: 40, completion: 2 })],
      elsewhere,
    );
    expect(withPeek(dbPath(), (peek) => [peek.tokens(mine.id), peek.tokens(theirs.id)])).toEqual([300, 42]);

    const listed = await hearth(['sessions']);
    expect(listed.code, listed.stderr).toBe(0);
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    expect(cells(header!)).toEqual(['id', 'updated', 'turns', 'tokens', 'status', 'title']);
    expect(rows.map(cells)).toEqual([
      [mine.id, expect.stringMatching(DATE), '2', '300', 'completed', 'read the notes'],
    ]);

    const all = await hearth(['sessions', '--all']);
    expect(all.code, all.stderr).toBe(0);
    // Newest first, each with its workspace.
    expect(all.stdout.trimEnd().split('\n').slice(1).map(cells)).toEqual([
      [theirs.id, expect.stringMatching(DATE), '1', '42', 'completed', 'say hello', elsewhere],
      [mine.id, expect.stringMatching(DATE), '2', '300', 'completed', 'read the notes', cli.workspace],
    ]);

    const empty = await mkdtemp(join(cli.home, 'empty-'));
    const none = await hearth(['sessions'], empty);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('No sessions in this workspace (try --all).\n');
  });

  it('shows a readable transcript with the tool calls and their results, by id or prefix', async () => {
    const { id } = await runTask(['read the notes'], readNotes());
    const shown = await hearth(['sessions', 'show', id]);
    expect(shown.code, shown.stderr).toBe(0);
    const text = shown.stdout;
    expect(text).toMatch(/^# read the notes\n/);
    expect(text).toContain(`- id: ${id}\n`);
    expect(text).toContain(`- workspace: ${cli.workspace}\n`);
    expect(text).toContain('- status: completed\n');
    expect(text).toContain('## User\n\nread the notes\n');
    expect(text).toContain('## Assistant\n\nReading the notes.\n\n**→ read_file** `{"path":"notes.txt"}`');
    // The tool's result, fenced, as the model saw it (numbered lines).
    expect(text).toMatch(/```\n\s*1\talpha\n\s*2\tbeta[\s\S]*?\n```/);
    expect(text).toContain('## Assistant\n\nThe notes say alpha and beta.\n');
    // In order: task, call, result, answer.
    const order = ['## User', '**→ read_file**', '1\talpha', 'The notes say alpha and beta.'].map((s) =>
      text.indexOf(s),
    );
    expect(order).toEqual([...order].sort((a, b) => a - b));

    const byPrefix = await hearth(['sessions', 'show', id.slice(0, 6)]);
    expect(byPrefix.code, byPrefix.stderr).toBe(0);
    expect(byPrefix.stdout).toBe(text);
  });

  it('exports JSON lines equal to the database, and Markdown to a file', async () => {
    const { id } = await runTask(['read the notes'], readNotes());
    const exported = await exportJsonl(id);
    expect(exported.header).toEqual({
      type: 'session',
      id,
      title: 'read the notes',
      workspace: cli.workspace,
      model: 'm',
      parentId: null,
      depth: 0,
      status: 'completed',
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    });
    const stored = messagesOf(id);
    expect(stored.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(exported.messages).toEqual(stored);
    // jsonl is the default format.
    expect((await hearth(['sessions', 'export', id])).stdout).toBe(exported.text);

    const file = join(cli.home, 'session.md');
    const md = await hearth(['sessions', 'export', id.slice(0, 6), '--format', 'md', '-o', file]);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toBe('');
    expect(await readFile(file, 'utf8')).toBe((await hearth(['sessions', 'show', id])).stdout);

    const bad = await hearth(['sessions', 'export', id, '--format', 'xml']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('hearth: Unknown format "xml": use jsonl or md.\n');
  });

  it('forks a session: same history, a parent, and continuing the fork leaves the original alone', async () => {
    const original = await runTask(['read the notes'], readNotes());
    const before = await exportJsonl(original.id);

    const forked = await hearth(['sessions', 'fork', original.id.slice(0, 6)]);
    expect(forked.code, forked.stderr).toBe(0);
    const forkId = /^Forked into session ([0-9a-f]+)\. Continue it with: hearth --resume \1 "\.\.\."$/m.exec(
      forked.stdout,
    )?.[1];
    expect(forkId, forked.stdout).toBeDefined();
    expect(forkId).not.toBe(original.id);

    const copy = await exportJsonl(forkId!);
    expect(copy.header).toMatchObject({
      id: forkId,
      parentId: original.id,
      title: 'read the notes (fork)',
      workspace: cli.workspace,
    });
    expect(copy.messages).toEqual(before.messages);
    expect(withPeek(dbPath(), (peek) => peek.sessions().find((s) => s.id === forkId)?.parentId)).toBe(
      original.id,
    );

    const sent = cli.server.requests.length;
    const continued = await runTask(
      ['--resume', forkId!.slice(0, 6), 'now count the lines'],
      [reply().text('There are two lines.')],
    );
    expect(continued.id).toBe(forkId);
    const request = cli.server.requests[sent]!.body.messages as ChatMessage[];
    expect(request).toEqual([...before.messages, { role: 'user', content: 'now count the lines' }]);

    // The original is byte for byte what it was; the fork grew by the new exchange.
    expect((await exportJsonl(original.id)).text).toBe(before.text);
    const grown = await exportJsonl(forkId!);
    expect(grown.messages.slice(0, before.messages.length)).toEqual(before.messages);
    expect(grown.messages.slice(before.messages.length)).toEqual([
      { role: 'user', content: 'now count the lines' },
      expect.objectContaining({ role: 'assistant', content: 'There are two lines.' }),
    ]);
    expect(grown.messages).toEqual(messagesOf(forkId!));

    const listed = await hearth(['sessions']);
    expect(
      listed.stdout
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((row) => cells(row)[0]),
    ).toEqual([forkId, original.id]);
  });

  it('continues the latest session of this workspace with -c, and says so when there is none', async () => {
    const older = await runTask(['read the notes'], readNotes());
    const latest = await runTask(['say hello'], [reply().text('Hello.')]);
    // A newer session elsewhere must not be picked up.
    await runTask(['say hi'], [reply().text('Hi.')], elsewhere);
    const olderBefore = messagesOf(older.id);
    const history = messagesOf(latest.id);

    const sent = cli.server.requests.length;
    const continued = await runTask(['-c', 'and then?'], [reply().text('Then nothing.')]);
    expect(continued.id).toBe(latest.id);
    expect(continued.stdout).toContain('Then nothing.');
    const request = cli.server.requests[sent]!.body.messages as ChatMessage[];
    expect(request).toEqual([...history, { role: 'user', content: 'and then?' }]);
    expect(historyProblems(request)).toEqual([]);
    expect(messagesOf(older.id)).toEqual(olderBefore);
    expect(withPeek(dbPath(), (peek) => peek.sessions().length)).toBe(3);

    const empty = await realpath(await mkdtemp(join(cli.home, 'empty-')));
    const requests = cli.server.requests.length;
    const none = await hearth(['-c', 'carry on'], empty);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(`hearth: No earlier session in ${empty} to continue.\n`);
    expect(cli.server.requests).toHaveLength(requests);
  });

  it('removes a session with everything kept with it; unknown ids give a clear error', async () => {
    const kept = await runTask(['say hello'], [reply().text('Hello.')]);
    const { id } = await runTask(['read the notes'], readNotes());
    const keptMessages = messagesOf(kept.id);

    const removed = await hearth(['sessions', 'rm', id.slice(0, 6)]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toBe(`Deleted session ${id} (read the notes).\n`);
    withPeek(dbPath(), (peek) => {
      expect(peek.sessions().map((s) => s.id)).toEqual([kept.id]);
      for (const table of ['messages', 'usage', 'audit'] as const)
        expect(peek.count(table, id), table).toBe(0);
      expect(peek.messages(kept.id)).toEqual(keptMessages);
    });

    const requests = cli.server.requests.length;
    for (const args of [
      ['sessions', 'show', id],
      ['sessions', 'export', id],
      ['sessions', 'rm', id],
      ['sessions', 'fork', id],
      ['--resume', id, 'carry on'],
    ]) {
      const r = await hearth(args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toBe(`hearth: No session matches "${id}". List them with: hearth sessions\n`);
    }
    const unknown = await hearth(['sessions', 'show', 'no-such-id']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('hearth: No session matches "no-such-id". List them with: hearth sessions\n');
    expect(cli.server.requests).toHaveLength(requests);
  });

  it('resolves id prefixes: unique ones work, ambiguous ones and LIKE wildcards do not', async () => {
    const { id } = await runTask(['say hello'], [reply().text('Hello.')]);
    // Two planted sessions whose ids share a prefix (real ids are random, so no test could rely on it).
    withPeek(
      dbPath(),
      (peek) => {
        const insert = peek.db.prepare(
          `INSERT INTO sessions (id, title, workspace, model, status, created_at, updated_at)
           VALUES (?, ?, ?, 'm', 'completed', 1, 1)`,
        );
        insert.run('zz00000001', 'planted one', cli.workspace);
        insert.run('zz00000002', 'planted two', cli.workspace);
      },
      { writable: true },
    );

    const ambiguous = await hearth(['sessions', 'show', 'zz']);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toBe('hearth: "zz" matches several sessions; give more of the id.\n');
    const one = await hearth(['sessions', 'show', 'zz00000002']);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^# planted two\n/);
    const short = await hearth(['sessions', 'show', id.slice(0, 3)]);
    expect(short.code, short.stderr).toBe(0);
    expect(short.stdout).toContain(`- id: ${id}\n`);
    for (const pattern of ['%', '_', 'zz%1', 'zz_0000001']) {
      const r = await hearth(['sessions', 'show', pattern]);
      expect(r.code, pattern).toBe(1);
      expect(r.stderr).toBe(`hearth: No session matches "${pattern}". List them with: hearth sessions\n`);
    }
  });

  it('--resume of a finished session with no task says what to do', async () => {
    const { id } = await runTask(['read the notes'], readNotes());
    const requests = cli.server.requests.length;
    const r = await hearth(['--resume', id, '--yolo']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `hearth: Session ${id} finished its last task. Say what to do next: hearth --resume ${id} "..."\n`,
    );
    const bare = await hearth([]);
    expect(bare.code).toBe(1);
    expect(bare.stderr).toMatch(/^hearth: No task given\. Usage: hearth "what to do"/);
    expect(cli.server.requests).toHaveLength(requests);
    expect(messagesOf(id).at(-1)).toMatchObject({
      role: 'assistant',
      content: 'The notes say alpha and beta.',
    });
  });

  it('compacts a stored session on demand, and the next run starts from the summary', async () => {
    // Long enough, past the share of the window kept verbatim, that a summary is smaller than what it
    // replaces; dense in tokens, yet under what one reply may add (30% of the window, in characters).
    const [first, last] = readNotes() as [ReturnType<typeof reply>, ReturnType<typeof reply>];
    const { id } = await runTask(
      ['what do the notes say?'],
      [first.text(` ${'Detail 7, '.repeat(800)}`), last],
    );
    cli.server.push(reply().text('Goal: report the notes.\nCurrent state: done, they say alpha and beta.'));
    const compacted = await hearth(['sessions', 'compact', id]);
    expect(compacted.code, compacted.stderr).toBe(0);
    expect(compacted.stdout).toMatch(
      new RegExp(`Compacted session ${id} \\(older turns summarized\\): \\d+ → \\d+ tokens`),
    );
    const summaryRequest = cli.server.requests.at(-1)!.body;
    expect(summaryRequest.tools).toBeUndefined();

    await runTask(['--resume', id, 'and now?'], [reply().text('Still alpha and beta.')]);
    const sent = cli.server.requests.at(-1)!.body.messages as ChatMessage[];
    expect(sent[1]!.content).toContain('Current state: done, they say alpha and beta.');
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'and now?' });
    // The full history stays in the store for people: show still prints the first answer.
    expect((await hearth(['sessions', 'show', id])).stdout).toContain('The notes say alpha and beta.');
  });
});
