import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply, type TurnInput } from '../support/scripted-server.js';

const cli = useCliHarness('script');

function serve(turns: TurnInput[]) {
  return cli.serve({ turns, models: ['qwen-test'] });
}
const jsonLines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type: string; [key: string]: unknown });

describe('a script driving hearth without a terminal', () => {
  it('pauses with exit 3, then runs the approved call on --resume ID --approve all', async () => {
    await serve([
      reply().tool('write_file', { path: 'out.txt', content: 'approved\n' }),
      reply().text('Wrote out.txt.'),
    ]);
    const first = await cli.run(['--json', '--pause-for-approval', 'write out.txt']);
    expect(first.code).toBe(3);
    const events = jsonLines(first.stdout);
    const session = events.find((e) => e.type === 'session')!;
    expect(events.at(-1)).toMatchObject({
      type: 'done',
      reason: 'paused',
      pending: [{ name: 'write_file' }],
    });
    expect(first.stderr).toContain(`hearth --resume ${session.id} --approve all`);
    await expect(readFile(join(cli.workspace, 'out.txt'))).rejects.toThrow();

    // Without an answer the script is told how to give one, and nothing runs.
    const unanswered = await cli.run(['--resume', String(session.id)]);
    expect(unanswered.code).toBe(1);
    expect(unanswered.stderr).toMatch(/waits for approval of write_file .*--approve all/);

    const second = await cli.run(['--resume', String(session.id), '--approve', 'all']);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('Wrote out.txt.');
    expect(await readFile(join(cli.workspace, 'out.txt'), 'utf8')).toBe('approved\n');
  });

  it('reports start-up errors as a JSON line too, with exit 1', async () => {
    const r = await cli.run(['--json', '--base-url', 'localhost:1234', 'hi']);
    expect(r.code).toBe(1);
    expect(jsonLines(r.stdout)).toEqual([
      {
        type: 'error',
        message: expect.stringMatching(/--base-url: expected a URL .*http:\/\/127\.0\.0\.1:1234\/v1/),
      },
    ]);
  });

  it('names the rule that lets a secret file be read: --yolo does not', async () => {
    await writeFile(join(cli.workspace, '.env'), 'TOKEN=x\n');
    await serve([reply().tool('read_file', { path: '.env' }), reply().text('Could not read it.')]);
    const r = await cli.run(['--yolo', 'read .env']);
    const tool = (cli.server.requests[1]!.body.messages as ChatMessage[]).at(-1)!;
    expect(tool.content).toContain("--allow 'read_file(.env)'");
    expect(tool.content).not.toContain('--yolo');
    expect(r.code).toBe(4);
  });

  it('keeps piped stdin verbatim: a first line starting with a space keeps it', async () => {
    await serve([reply().text('ok')]);
    const diff = ' context line\n-old\n+new\n';
    await cli.run(['review'], { stdin: diff });
    expect((cli.server.requests[0]!.body.messages as ChatMessage[])[1]!.content).toBe(
      'review\n\n context line\n-old\n+new',
    );
  });
});

describe('the answer on stdout', () => {
  it("at a terminal, each turn's text starts on a new paragraph instead of running into the last", async () => {
    await serve([reply().text('Let me look.').tool('list_dir', {}), reply().text('It is empty.')]);
    const term = cli.terminal(['--yolo', 'look']);
    expect(await term.exited).toBe(0);
    expect(term.screen).toMatch(/Let me look\.\r?\n[\s\S]*\r?\n\r?\nIt is empty\./);
    expect(term.screen).not.toContain('Let me look.It is empty.');
  });
});

describe('--plan', () => {
  const turns = () => [
    reply().tool('write_file', { path: 'early.txt', content: 'too soon' }),
    reply().text('1. Create notes.txt\n2. Check it'),
    reply().tool('write_file', { path: 'notes.txt', content: 'planned\n' }),
    reply().text('Done.'),
  ];

  it('plans read-only, asks, then carries the plan out with its steps as the todo list', async () => {
    await serve(turns());
    const term = cli.terminal(['--yolo', '--plan', 'make notes']);
    await term.waitFor(/Carry out this plan\? y yes · n no/);
    term.send('y');
    expect(await term.exited).toBe(0);
    expect(term.screen).toContain("The plan's 2 steps are the todo list now.");
    await expect(readFile(join(cli.workspace, 'early.txt'))).rejects.toThrow();
    expect(await readFile(join(cli.workspace, 'notes.txt'), 'utf8')).toBe('planned\n');
    const planning = cli.server.requests[1]!.body.messages as ChatMessage[];
    expect(planning[1]!.content).toMatch(/^make notes\n\n\[Plan first:/);
    expect(planning.at(-1)!.content).toMatch(/^Error: Plan mode: write_file was not run/);
    const carrying = cli.server.requests[2]!.body.messages as ChatMessage[];
    expect(carrying.at(-1)).toEqual({
      role: 'user',
      content: expect.stringMatching(/^The plan is approved/),
    });
  });

  it('without a terminal, stops after the plan and says how to go on', async () => {
    await serve(turns());
    const r = await cli.run(['--yolo', '--plan', 'make notes']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('1. Create notes.txt');
    expect(r.stderr).toMatch(/The plan waits for your go-ahead: hearth --resume \S+ "go ahead"/);
    await expect(readFile(join(cli.workspace, 'notes.txt'))).rejects.toThrow();
  });
});

describe('long command output', () => {
  const LOUD = 'seq 1 60000';

  it('is shown as its last lines, with the command that prints it whole from the session', async () => {
    await serve([reply().tool('shell', { command: LOUD }), reply().text('Counted.')]);
    const r = await cli.run(['--yolo', 'count']);
    expect(r.code).toBe(0);
    expect(r.stderr.length).toBeLessThan(4000);
    const pointer = /hearth sessions output (\S+) (\S+)/.exec(r.stderr);
    expect(pointer).not.toBeNull();
    expect(r.stderr).toContain('60000');
    const full = await cli.run(['sessions', 'output', pointer![1]!, pointer![2]!]);
    expect(full.code).toBe(0);
    const lines = full.stdout.trim().split('\n');
    expect(lines.slice(0, 3)).toEqual(['1', '2', '3']);
    expect(lines).toContain('60000');
  });

  it('keeps --json tool_result lines bounded', async () => {
    await serve([reply().tool('shell', { command: LOUD }), reply().text('Counted.')]);
    const r = await cli.run(['--json', '--yolo', 'count']);
    expect(r.code).toBe(0);
    const line = r.stdout.split('\n').find((l) => l.includes('"type":"tool_result"'))!;
    expect(line.length).toBeLessThan(60_000);
    expect(line).toContain('hearth sessions output');
  });
});

describe('errors a user can act on, in one line and without a stack trace', () => {
  const oneLine = (stderr: string) => {
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  };

  it.each([
    [
      'a missing workspace',
      ['-C', '/nonexistent/hearth-ws', 'hi'],
      /workspace \/nonexistent\/hearth-ws does not exist/,
    ],
    ['a base URL without a scheme', ['--base-url', 'localhost:1234', 'hi'], /--base-url: expected a URL/],
    [
      'contradicting flags',
      ['--yolo', '--permission-mode', 'plan', 'hi'],
      /--yolo and --permission-mode plan contradict/,
    ],
  ])('%s', async (_what, args, message) => {
    const r = await cli.run(args);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    oneLine(r.stderr);
  });

  it('a model the server does not have, named with -m: the names it could be', async () => {
    await serve([reply().text('never')]);
    const r = await cli.run(['-m', 'qwen-tset', 'hi']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/has no model "qwen-tset"\. It has: qwen-test\. Pass one with -m\./);
    oneLine(r.stderr);
    expect(cli.server.requests).toHaveLength(0);
    // A unique part of a listed name is taken as that model.
    await serve([reply().text('fine')]);
    const partial = await cli.run(['-m', 'qwen', 'hi']);
    expect(partial.code).toBe(0);
    expect(cli.server.requests[0]!.body.model).toBe('qwen-test');
  });

  it('a lone word one letter off a command goes to the model as a task, with the command named on stderr', async () => {
    await serve([reply().text('Hm.')]);
    const r = await cli.run(['sesions']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /"sesions" is not a command: it goes to the model as a task\. For the command: hearth sessions/,
    );
  });

  it('hearth config and hearth debug without a subcommand show their help and succeed', async () => {
    for (const command of ['config', 'debug']) {
      const r = await cli.run([command]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Usage: hearth ${command}`));
    }
  });

  it('a workspace that is a file', async () => {
    await writeFile(join(cli.workspace, 'file.txt'), 'x');
    const r = await cli.run(['-C', join(cli.workspace, 'file.txt'), 'hi'], { cwd: cli.home });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/is a file, not a folder/);
    oneLine(r.stderr);
  });

  it('a damaged database, with the fix: move it aside', async () => {
    await mkdir(cli.hearthHome, { recursive: true });
    const db = join(cli.home, '.hearth', 'hearth.db');
    await writeFile(db, 'this is not sqlite at all, just some bytes '.repeat(200));
    await serve([reply().text('never')]);
    const r = await cli.run(['hi']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`mv '${db}' '${db}.broken'`);
    oneLine(r.stderr);
  });

  it('a server that keeps answering 500 is not asked whether it runs; what it said is shown', async () => {
    const failure = { httpError: { status: 500, body: '{"error":{"message":"CUDA out of memory"}}' } };
    await serve([failure, failure]);
    await mkdir(join(cli.workspace, '.hearth'));
    await writeFile(join(cli.workspace, '.hearth', 'config.json'), '{"max_retries": 1}');
    const r = await cli.run(['-m', 'qwen-test', 'hi']);
    expect(r.stderr).toMatch(/Gave up after 2 attempts/);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/CUDA out of memory/);
    expect(r.stderr).not.toMatch(/running\?/);
  });
});
