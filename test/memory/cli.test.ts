import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply, type TurnInput } from '../support/scripted-server.js';
import { trigramEmbeddingsRoute } from '../support/trigram-embeddings.js';

const cli = useCliHarness('memory-cli');

/** The scripted server with the trigram embeddings model listed and served. */
const serveWithEmbeddings = (turns: TurnInput[] = []) =>
  cli.serve({
    turns,
    models: ['chat-model', 'trigram-embed'],
    extraRoutes: { 'POST /v1/embeddings': trigramEmbeddingsRoute().route },
  });

const hearth = (...args: string[]) => cli.run(args);
const idOf = (stdout: string) => /Remembered as #(\d+)/.exec(stdout)![1]!;

describe('hearth memory (the built CLI)', () => {
  it('adds, lists, searches by exact token and by meaning, and forgets', async () => {
    await serveWithEmbeddings();
    const added = await hearth('memory', 'add', 'The', 'staging', 'deploy', 'runs', 'make', 'ship-staging');
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/^Remembered as #\d+ \(fact, this workspace\)\.$/m);
    const user = await hearth(
      'memory',
      'add',
      '--user',
      '--kind',
      'preference',
      'Answers in British English',
    );
    expect(user.stdout).toMatch(/\(preference, every workspace\)/);
    await hearth('memory', 'add', 'Error E4021 means the cache volume is full');

    const again = await hearth('memory', 'add', 'the staging deploy runs make ship-staging');
    expect(again.stdout).toMatch(/^Already remembered as #\d+: The staging deploy runs make ship-staging$/m);

    const listed = await hearth('memory', 'list');
    expect(listed.stdout.trim().split('\n')).toHaveLength(3);
    expect(listed.stdout).toMatch(/^#\d+\s+preference user\s+Answers in British English$/m);
    const preferences = await hearth('memory', 'list', '--kind', 'preference');
    expect(preferences.stdout.trim().split('\n')).toHaveLength(1);

    const exact = await hearth('memory', 'search', '-k', '1', 'E4021');
    expect(exact.stdout).toContain('Error E4021 means the cache volume is full');
    expect(exact.stderr).not.toContain('keyword search only');
    // No word in common with the memory: found by the trigram vectors over /v1/embeddings.
    const meaning = await hearth('memory', 'search', '-k', '1', 'deployment', 'to', 'stage');
    expect(meaning.stdout).toContain('The staging deploy runs make ship-staging');

    const json = JSON.parse((await hearth('memory', 'list', '--json')).stdout) as Array<{ id: number }>;
    const forgot = await hearth('memory', 'forget', `#${json[0]!.id}`);
    expect(forgot.code).toBe(0);
    expect(forgot.stdout).toMatch(/^Forgot #\d+: /);
    expect((await hearth('memory', 'list')).stdout.trim().split('\n')).toHaveLength(2);
  });

  it('says search is keyword-only when the server has no embeddings model, and still finds exact tokens', async () => {
    await cli.serve();
    await hearth('memory', 'add', 'Port 5433 is the test database');
    const found = await hearth('memory', 'search', '5433');
    expect(found.code).toBe(0);
    expect(found.stdout).toContain('Port 5433 is the test database');
    expect(found.stderr).toMatch(/keyword search only: the server lists no embeddings model/);
  });

  it('refuses bad input with a clear message and keeps what is stored', async () => {
    await cli.serve();
    const id = idOf((await hearth('memory', 'add', 'Keep me')).stdout);
    const cases: Array<[string[], RegExp]> = [
      [['memory', 'forget', 'abc'], /"abc" is not a memory id/],
      [['memory', 'forget', '999'], /No memory #999 in this workspace/],
      [
        ['memory', 'list', '--kind', 'rumour'],
        /Unknown kind "rumour": use fact, preference, learning, skill/,
      ],
      [['memory', 'add', '--kind', 'skill', 'x y z'], /Unknown kind "skill": use fact, preference, learning/],
      [['memory', 'export', '--format', 'pdf'], /Unknown format "pdf": use md or json/],
      [['memory', 'review', '--accept', '7'], /No pending proposal 7\. Pending: none/],
    ];
    for (const [args, message] of cases) {
      const run = await cli.run(args);
      expect(run.code, args.join(' ')).not.toBe(0);
      expect(run.stderr, args.join(' ')).toMatch(message);
    }
    expect((await hearth('memory', 'list')).stdout).toMatch(
      new RegExp(`^#${id}\\s+fact\\s+project Keep me$`, 'm'),
    );
  });

  it('keeps project memories to their workspace; --all shows every workspace', async () => {
    await cli.serve();
    await hearth('memory', 'add', 'Only in the first project');
    const other = await cli.tempDir('memory-other');
    const elsewhere = await cli.run(['memory', 'list'], { cwd: other });
    expect(elsewhere.stdout).toContain('No memories here yet');
    const all = await cli.run(['memory', '--all', 'list'], { cwd: other });
    expect(all.stdout).toContain('Only in the first project');
  });

  it('exports Markdown to a file', async () => {
    await cli.serve();
    await hearth('memory', 'add', '--kind', 'learning', 'Run vitest with run, not watch');
    const file = join(cli.workspace, 'memories.md');
    expect((await hearth('memory', 'export', '-o', file)).code).toBe(0);
    const { readFile } = await import('node:fs/promises');
    expect(await readFile(file, 'utf8')).toMatch(
      /## Learnings\n\n- Run vitest with run, not watch <!-- #\d+/,
    );
  });

  it('shows no raw control character that a memory holds, in text or JSON', async () => {
    await cli.serve();
    await hearth('memory', 'add', 'Colour \x1b[31mred\x1b[0m and \u009b2J are kept as written');
    for (const args of [
      ['memory', 'list'],
      ['memory', 'list', '--json'],
      ['memory', 'search', 'Colour'],
      ['memory', 'export'],
      ['memory', 'export', '--format', 'json'],
    ]) {
      const run = await cli.run(args);
      expect(run.stdout, args.join(' ')).toContain('Colour');
      expect(run.stdout, args.join(' ')).not.toMatch(/[\x1b\u009b]/);
    }
  });

  it('--help names every action, the files it reads and the settings', async () => {
    const help = await hearth('memory', '--help');
    expect(help.code).toBe(0);
    for (const word of [
      'list',
      'search',
      'add',
      'forget',
      'export',
      'reflect',
      'review',
      'MEMORY.md',
      'USER.md',
      'memory.auto_accept',
      '--tools default,memory',
    ])
      expect(help.stdout).toContain(word);
    expect((await hearth('--help')).stdout).toMatch(/memory .*long-term memory/);
  });
});

describe('hearth memory review at a terminal', () => {
  it('asks proposal by proposal: edit keeps the new text, reject drops, quit leaves the rest waiting', async () => {
    await serveWithEmbeddings([
      reply().tool('read_file', { path: 'notes.txt' }),
      reply().text('The notes say to use port 5433.'),
      reply().text(
        JSON.stringify({
          knowledge: [
            { text: 'The test database listens on port 5433', kind: 'fact', scope: 'project', message: 3 },
            { text: 'The notes file is notes.txt at the root', kind: 'fact', scope: 'project', message: 2 },
            { text: 'The user likes answers in one sentence', kind: 'preference', scope: 'user' },
          ],
          learnings: [],
          skills: [],
        }),
      ),
    ]);
    await writeFile(join(cli.workspace, 'notes.txt'), 'test db: port 5433\n');
    expect((await hearth('--yolo', '-p', 'What do the notes say?')).code).toBe(0);
    const reflected = await hearth('memory', 'reflect');
    expect(reflected.stdout).toContain('3 proposed: review with hearth memory review');

    const term = cli.terminal(['memory', 'review']);
    // Readline redraws its question as keys arrive: each wait is for what only the answer brings.
    await term.waitFor(/\[a\]ccept, \[e\]dit, \[r\]eject, \[s\]kip, \[q\]uit\? /);
    expect(term.screen).toContain('fact (project) The test database listens on port 5433');
    let since = term.screen.length;
    term.send('e\r');
    await term.waitFor(/new text: /, undefined, since);
    since = term.screen.length;
    term.send('The test database (docker compose) listens on port 5433\r');
    await term.waitFor(
      /Accepted \[\d+\] as #\d+\.[\s\S]*notes\.txt at the root[\s\S]*\[q\]uit\? /,
      undefined,
      since,
    );
    since = term.screen.length;
    term.send('r\r');
    await term.waitFor(/Rejected \[\d+\]\.[\s\S]*one sentence[\s\S]*\[q\]uit\? /, undefined, since);
    term.send('q\r');
    expect(await term.exited).toBe(0);

    const listed = await hearth('memory', 'list');
    expect(listed.stdout).toMatch(/fact\s+project The test database \(docker compose\) listens on port 5433/);
    expect(listed.stdout).not.toContain('notes.txt');
    expect(listed.stdout).toContain('1 proposal(s) wait for review');
    // Without a terminal the waiting one is listed with how to answer.
    const piped = await hearth('memory', 'review');
    expect(piped.stdout).toContain('preference (user) The user likes answers in one sentence');
    expect(piped.stdout).toContain('hearth memory review --accept IDS | --reject IDS');
  });
});

describe('/memory in the REPL', () => {
  it('adds, lists, searches and forgets, and says how to use it', async () => {
    const term = await cli.repl({
      models: ['chat-model', 'trigram-embed'],
      extraRoutes: { 'POST /v1/embeddings': trigramEmbeddingsRoute().route },
    });
    const added = await term.enter('/memory add Releases are tagged vX.Y.Z by scripts/tag.sh');
    const id = /Remembered as #(\d+)\./.exec(added)![1]!;
    expect(await term.enter('/memory')).toContain(`#${id} fact Releases are tagged vX.Y.Z by scripts/tag.sh`);
    expect(await term.enter('/memory search tag.sh')).toContain(`#${id} fact`);
    expect(await term.enter('/memory frobnicate')).toContain(
      'Usage: /memory [search QUERY | add TEXT | forget ID]',
    );
    expect(await term.enter(`/memory forget #${id}`)).toContain(`Forgot #${id}.`);
    expect(await term.enter(`/memory forget ${id}`)).toContain(`No memory #${id} here.`);
    expect(await term.enter('/memory')).toContain('No memories here yet');
    expect(await term.enter('/help')).toMatch(/\/memory/);
    term.send('/exit\r');
    expect(await term.exited).toBe(0);
  });
});
