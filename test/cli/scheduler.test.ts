/**
 * The scheduler through the built CLI, over real folders, a real database and the scripted model
 * server: the inbox, wake-ups and jobs, each run by `hearth scheduler --once` (one pass, then exit).
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';
import { withPeek } from '../support/store-peek.js';
import { waitUntil } from '../support/wait.js';

const cli = useCliHarness('scheduler');
const dbPath = () => join(cli.hearthHome, 'hearth.db');
const inbox = () => join(cli.hearthHome, 'inbox');

beforeEach(async () => {
  await cli.serve({ models: ['m'] });
});

async function hearth(args: string[]) {
  const r = await cli.run(args);
  expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(0);
  return r;
}

const userTexts = (sessionId: string) =>
  withPeek(dbPath(), (peek) => peek.messages(sessionId))
    .filter((m) => m.role === 'user')
    .map((m) => m.content);

describe('inbox', () => {
  it('takes a submitted task and a file dropped into the folder, runs each in a new session, and files them under done/', async () => {
    await hearth(['submit', 'summarise', 'the', 'notes']);
    await writeFile(join(inbox(), 'dropped.txt'), 'list the TODOs\n');
    cli.server.push(
      reply().text('Summary done.').usage({ prompt: 50, completion: 5 }),
      reply().text('No TODOs.'),
    );

    const r = await hearth(['scheduler', '--once']);
    expect(r.stdout).toMatch(/inbox dropped\.txt: .*ok/);

    expect(await readdir(inbox())).toEqual(expect.arrayContaining(['done', 'running']));
    const done = (await readdir(join(inbox(), 'done'))).sort();
    expect(done).toHaveLength(4); // two tasks, each with its result beside it
    const results = await Promise.all(
      done
        .filter((n) => n.endsWith('.result.json'))
        .map(async (n) => JSON.parse(await readFile(join(inbox(), 'done', n), 'utf8'))),
    );
    const tasks = results.map((result) => {
      expect(result.status).toBe('ok');
      return userTexts(result.session)[0];
    });
    expect(tasks.sort()).toEqual(['list the TODOs', 'summarise the notes']);
    // Submitted from the workspace: it ran there.
    const sessions = withPeek(dbPath(), (peek) => peek.sessions());
    expect(sessions.every((s) => s.workspace === cli.workspace)).toBe(true);

    const listed = await hearth(['inbox']);
    expect(listed.stdout).toMatch(/^done\s+dropped\.txt\s+session [0-9a-f]+$/m);
  });

  it('a task file it cannot read goes to failed/ with the reason, and nothing is asked of the model', async () => {
    await mkdir(inbox(), { recursive: true });
    await writeFile(join(inbox(), 'broken.json'), '{"task": ');
    await hearth(['scheduler', '--once']);
    const result = JSON.parse(await readFile(join(inbox(), 'failed', 'broken.json.result.json'), 'utf8'));
    expect(result).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^not valid JSON/) });
    expect(cli.server.requests).toHaveLength(0);
    expect((await hearth(['inbox'])).stdout).toMatch(/^failed\s+broken\.json\s+not valid JSON/m);
  });
});

describe('wake-ups', () => {
  it('resumes the session with the message at its time, with the earlier history', async () => {
    cli.server.push(reply().text('Build started.'));
    const first = await hearth(['--yolo', 'start the build']);
    const id = /session ([0-9a-f]+)/.exec(first.stderr)![1]!;

    // Due at once: a time up to a minute ago is accepted (and a run needs no waiting here).
    await hearth(['wake', id.slice(0, 6), '--at', new Date().toISOString(), 'check', 'the', 'build']);
    expect((await hearth(['wake', '--list'])).stdout).toMatch(new RegExp(`session ${id}\\s+check the build`));

    cli.server.push(reply().text('The build passed.'));
    const r = await hearth(['scheduler', '--once']);
    expect(r.stdout).toMatch(new RegExp(`wake-up of ${id}: .*ok`));

    const request = cli.server.requests.at(-1)!.body as {
      messages: Array<{ role: string; content: string }>;
    };
    const contents = request.messages.map((m) => m.content);
    expect(contents).toContain('start the build');
    expect(contents).toContain('Build started.');
    expect(contents.at(-1)).toMatch(/^\[Wake-up, set for .*\] check the build$/);
    expect(userTexts(id)).toHaveLength(2);
    expect((await hearth(['wake', '--list'])).stdout).toBe('No pending wake-ups.\n');
  });

  it('the schedule_wakeup tool sets one from inside a run, and the scheduler resumes the session with it', async () => {
    cli.server.push(
      reply().tool('schedule_wakeup', { at: new Date().toISOString(), message: 'look at CI again' }),
      reply().text('I will check back.'),
    );
    const first = await hearth(['--yolo', '--tools', 'default,wakeup', 'watch CI']);
    const id = /session ([0-9a-f]+)/.exec(first.stderr)![1]!;
    expect((await hearth(['wake', '--list'])).stdout).toMatch(
      new RegExp(`session ${id}\\s+look at CI again`),
    );

    cli.server.push(reply().text('CI is green.'));
    await hearth(['scheduler', '--once']);
    expect(userTexts(id).at(-1)).toMatch(/^\[Wake-up, set for .*\] look at CI again$/);
    const toolResult = withPeek(dbPath(), (peek) => peek.messages(id)).find((m) => m.role === 'tool');
    expect(toolResult?.content).toMatch(/^Wake-up [0-9a-f]+ set for /);
  });

  it('says what times it reads when it cannot read one', async () => {
    cli.server.push(reply().text('Ok.'));
    const first = await hearth(['--yolo', 'hello']);
    const id = /session ([0-9a-f]+)/.exec(first.stderr)![1]!;
    const r = await cli.run(['wake', id, '--at', 'someday', 'hi']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Cannot read the time "someday"\. Write "in 1h"/);
  });
});

describe('hearth scheduler in the foreground', () => {
  it('runs what is due, a second one stands by, and both stop cleanly on SIGTERM, giving up the lease', async () => {
    await hearth(['jobs', 'add', 'greet', '--schedule', 'startup', '--prompt', 'say hello']);
    cli.server.push(reply().text('Hello.'));
    const watch = (run: ReturnType<typeof cli.start>) => {
      let out = '';
      run.child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      return (pattern: RegExp) => waitUntil(() => pattern.test(out), `${pattern} in: ${out}`);
    };
    const first = cli.start(['scheduler']);
    const firstSays = watch(first);
    await firstSays(/greet: .*ok\s+session [0-9a-f]+/);
    const second = cli.start(['scheduler']);
    await watch(second)(
      new RegExp(`another scheduler \\(pid ${first.child.pid}\\) is scheduling; standing by`),
    );
    for (const run of [second, first]) {
      run.child.kill('SIGTERM');
      const r = await run.result;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/Stopping…/);
    }
    const lease = withPeek(dbPath(), (peek) => peek.db.prepare('SELECT * FROM scheduler_lease').all());
    expect(lease).toEqual([]);
    expect(cli.server.requests).toHaveLength(1);
  });
});

describe('jobs', () => {
  it('a startup job runs when the scheduler starts; a manual run is recorded apart; runs list both', async () => {
    await hearth(['jobs', 'add', 'greet', '--schedule', 'startup', '--prompt', 'say hello']);
    cli.server.push(reply().text('Hello.').usage({ prompt: 40, completion: 3 }));
    await hearth(['scheduler', '--once']);
    cli.server.push(reply().text('Hello again.'));
    const manual = await hearth(['jobs', 'run', 'greet']);
    expect(manual.stdout).toMatch(/manual\s+ok\s+session [0-9a-f]+/);

    const runs = (await hearth(['jobs', 'runs', 'greet'])).stdout.trim().split('\n');
    expect(runs).toHaveLength(2);
    expect(runs[1]).toMatch(/on time\s+ok\s+session [0-9a-f]+\s+43 tokens/);
    const list = await hearth(['jobs']);
    expect(list.stdout).toMatch(/^greet\s+startup\s+at startup\s+ok /m);
  });

  it('jobs from an unapproved workspace cron.json do not run, and the list says why', async () => {
    await mkdir(join(cli.workspace, '.hearth'), { recursive: true });
    await writeFile(
      join(cli.workspace, '.hearth', 'cron.json'),
      JSON.stringify([{ id: 'w', name: 'w', schedule: 'startup', prompt: 'p' }]),
    );
    const r = await hearth(['jobs']);
    expect(r.stderr).toMatch(/cron\.json: not loaded: its jobs run only once you approve them/);
    await hearth(['scheduler', '--once']);
    expect(cli.server.requests).toHaveLength(0);
    await hearth(['jobs', 'trust']);
    expect((await hearth(['jobs'])).stdout).toMatch(/^w\s+startup/m);
  });
});
