import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { closedPort } from '../support/net.js';
import { keys } from '../support/pty.js';
import { reply } from '../support/scripted-server.js';
import { withDeadline } from '../support/wait.js';

/** The one-shot command line of the installed bin: what is a task, `--json`, a pipe, `hearth init`. */
const cli = useCliHarness('acc-cli');

/** What the last chat request said as the user's task. */
const lastTask = () => {
  const messages = cli.server.requests.at(-1)!.body.messages as { role: string; content: unknown }[];
  return JSON.stringify(messages.filter((m) => m.role === 'user').at(-1)!.content);
};

const jsonLines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('words that are a task, words that are a command', () => {
  it('runs words as a task when they are not a command as typed: one word near none, or words after a command that do not fit it', async () => {
    const tasks = [
      ['edit'],
      ['clean'],
      ['plan', 'the', 'refactor', 'of', 'auth'],
      ['init', 'a', 'git', 'repo'],
    ];
    await cli.serve(tasks.map(() => reply().text('Done.')));
    for (const words of tasks) {
      const r = await cli.run(words);
      expect(r.stderr).not.toMatch(/not a command|unknown command|too many arguments/);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('Done.\n');
      expect(lastTask()).toContain(words.join(' '));
    }
    expect(cli.server.requests).toHaveLength(tasks.length);
  });

  it('without a terminal, a lone word one edit from a command runs as a task and says so on stderr', async () => {
    await cli.serve([reply().text('Sessions are stored conversations.')]);
    const r = await cli.run(['sesions']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /"sesions" is not a command: it goes to the model as a task\. For the command: hearth sessions/,
    );
    expect(r.stdout).toBe('Sessions are stored conversations.\n');
    expect(lastTask()).toContain('sesions');
  });

  it('a command whose subcommand is mistyped is pointed at the right one, not sent to the model', async () => {
    await cli.serve([]);
    const r = await cli.run(['sessions', 'lst']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /"lst" is not a subcommand of hearth sessions\. Did you mean: hearth sessions list\?/,
    );
    const typo = await cli.run(['plan', 'ad', 'PLAN.md']);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toMatch(/Did you mean: hearth plan add\?/);
    expect(cli.server.requests).toHaveLength(0);
    // The subcommands, as typed, still work.
    const listed = await cli.run(['sessions', 'list']);
    expect(listed.stdout).toMatch(/No sessions in this workspace/);
    expect(listed.code).toBe(0);
  });

  it('-p gives even a command name to the model as a task', async () => {
    await cli.serve([reply().text('A plan is a list of steps.')]);
    const r = await cli.run(['-p', 'plan']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('A plan is a list of steps.\n');
    expect(lastTask()).toContain('plan');
  });

  it('--help states the rule', async () => {
    const r = await cli.run(['--help']);
    expect(r.stdout).toMatch(/Tasks and commands:/);
    expect(r.stdout).toMatch(/hearth plan the refactor of auth/);
  });

  describe('at a terminal, a lone word one edit from a command asks with one key', () => {
    it('Enter (the default) runs the command', async () => {
      await cli.serve([]);
      const term = cli.terminal(['sesions']);
      await term.waitFor(/"sesions" is not a command\. Run hearth sessions\? .*\[Y\/n\]/);
      term.send(keys.enter);
      expect(await term.exited).toBe(0);
      expect(term.screen).toMatch(/No sessions in this workspace/);
      expect(cli.server.requests).toHaveLength(0);
    });

    it('n runs the word as a task', async () => {
      await cli.serve([reply().text('Here is what sesions might mean.')]);
      const term = cli.terminal(['sesions']);
      await term.waitFor(/Run hearth sessions\? .*\[Y\/n\]/);
      term.send('n');
      expect(await term.exited).toBe(0);
      expect(term.screen).toContain('Here is what sesions might mean.');
      expect(lastTask()).toContain('sesions');
    });

    it('Ctrl+C runs neither', async () => {
      await cli.serve([]);
      const term = cli.terminal(['sesions']);
      await term.waitFor(/Run hearth sessions\? .*\[Y\/n\]/);
      term.send(keys.ctrlC);
      expect(await term.exited).toBe(130);
      expect(term.screen).not.toMatch(/No sessions/);
      expect(cli.server.requests).toHaveLength(0);
    });
  });
});

describe('--json: the first line names the session', () => {
  it('comes before the warnings of a new session', async () => {
    // A security setting in an unapproved project file is ignored with a warning, said before the run.
    await mkdir(join(cli.workspace, '.hearth'));
    await writeFile(
      join(cli.workspace, '.hearth', 'config.json'),
      JSON.stringify({ sandbox: { mode: 'none' } }),
    );
    await cli.serve([reply().text('Hi.')]);
    const r = await cli.run(['--json', 'hello']);
    expect(r.code).toBe(0);
    const lines = jsonLines(r.stdout);
    expect(lines[0]).toEqual({
      type: 'session',
      id: expect.stringMatching(/^[0-9a-f]+$/),
      model: 'scripted-model',
      workspace: cli.workspace,
    });
    expect(lines.some((l) => l.type === 'warning' && /Ignored sandbox/.test(String(l.message)))).toBe(true);
    expect(lines.filter((l) => l.type === 'session')).toHaveLength(1);
    expect(lines.at(-1)).toMatchObject({ type: 'done', reason: 'completed' });
  });

  it('comes before the error of a run refused once the session exists, with -c and with --resume', async () => {
    await cli.serve([reply().tool('write_file', { path: 'a.txt', content: 'a\n' })]);
    const paused = await cli.run(['--json', '--pause-for-approval', 'write a.txt']);
    expect(paused.code).toBe(3);
    const id = jsonLines(paused.stdout)[0]!.id;
    expect(id).toEqual(expect.any(String));

    // Waiting for approval, and no terminal to answer: refused, after saying which session.
    for (const args of [['--resume', String(id)], ['-c']]) {
      const r = await cli.run(['--json', ...args]);
      expect(r.code).toBe(1);
      const lines = jsonLines(r.stdout);
      expect(lines[0]).toMatchObject({ type: 'session', id, workspace: cli.workspace });
      expect(lines.at(-1)).toMatchObject({
        type: 'error',
        message: expect.stringMatching(/waits for approval/),
      });
    }
  });

  it('comes before the error of a finished session given nothing to do, of a server down, and of a server error', async () => {
    await cli.serve([reply().text('Done.'), reply().httpError(400, { body: 'bad request' })]);
    const first = await cli.run(['--json', 'do it']);
    const id = jsonLines(first.stdout)[0]!.id;

    const finished = await cli.run(['--json', '-c']);
    expect(finished.code).toBe(1);
    expect(jsonLines(finished.stdout)[0]).toMatchObject({ type: 'session', id });
    expect(jsonLines(finished.stdout).at(-1)).toMatchObject({ type: 'error' });

    // No server answers at all: the session it would have gone on is still named.
    const down = await cli.run(['--json', '-c', 'and again'], {
      env: { HEARTH_BASE_URL: `http://127.0.0.1:${await closedPort()}/v1` },
    });
    expect(down.code).toBe(1);
    expect(jsonLines(down.stdout)[0]).toMatchObject({ type: 'session', id });
    expect(jsonLines(down.stdout).at(-1)).toMatchObject({ type: 'error' });

    const failed = await cli.run(['--json', '-c', 'and again']);
    expect(failed.code).toBe(1);
    const lines = jsonLines(failed.stdout);
    expect(lines[0]).toMatchObject({ type: 'session', id, model: 'scripted-model' });
    expect(lines.at(-1)).toMatchObject({ type: 'done', reason: 'error' });
  });
});

describe('the answer into a pipe', () => {
  it('streams as the model writes it, not at the end', async () => {
    // Events: the role, then 12-character pieces of text; held after the first line is out.
    await cli.serve([reply().text('First line.\nSecond line comes later.\n').chunkSize(12).holdAfter(2)]);
    const run = cli.start(['tell me']);
    let out = '';
    const firstLine = new Promise<void>((resolve) => {
      run.child.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('First line.\n')) resolve();
      });
    });
    await cli.server.waitForHolds(1);
    await withDeadline(firstLine, () => `the first line on stdout while the model holds; stdout: ${out}`);
    expect(out).not.toContain('Second');
    cli.server.release();
    const r = await run.result;
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('First line.\nSecond line comes later.\n');
  });

  it('carries what the model says between tool calls too, each turn its own paragraph', async () => {
    await writeFile(join(cli.workspace, 'README.md'), 'A demo.\n');
    await cli.serve([
      reply().text('Let me read it.').tool('read_file', { path: 'README.md' }),
      reply().text('It is a demo.'),
    ]);
    const r = await cli.run(['what is this?']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Let me read it.\n\nIt is a demo.\n');
    expect(r.stderr).toMatch(/✓ read_file README\.md/);
  });
});

describe('hearth init', () => {
  it('writes a config that later runs use without a warning', async () => {
    const server = await cli.serve([reply().text('Hello.')]);
    const init = await cli.run(['init', '--yes', '--base-url', server.baseUrl], {
      env: { HEARTH_BASE_URL: undefined },
    });
    expect(init.code).toBe(0);
    expect(init.stdout).toMatch(/Created .*config\.json/);
    const written = JSON.parse(await readFile(join(cli.workspace, '.hearth', 'config.json'), 'utf8'));
    expect(written).toMatchObject({ base_url: server.baseUrl, model: 'scripted-model' });

    // Nothing else points at the server: the project file does, silently.
    const r = await cli.run(['hi'], { env: { HEARTH_BASE_URL: undefined } });
    expect(r.stderr).not.toMatch(/Ignored|hearth config trust/);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Hello.\n');
    const shown = await cli.run(['config', 'show'], { env: { HEARTH_BASE_URL: undefined } });
    expect(shown.stdout + shown.stderr).not.toMatch(/Ignored/);
  });
});
