/**
 * `hearth eval` through the installed bin, over the scripted server: the built-in suite scores a
 * model that does the tasks 100% and one that only answers 0%; a custom suite folder runs and
 * counts malformed calls and crashes; results are kept across processes and compared; a check
 * cannot reach outside its workspace; an interrupted run keeps what finished.
 */
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { chromiumMissing, launchChromium } from '../support/browser.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply, type TurnInput } from '../support/scripted-server.js';
import { waitUntil, withDeadline } from '../support/wait.js';
import { loggedInPage, startServe } from './support.js';

const SOLUTIONS = join(import.meta.dirname, '..', 'eval', 'solutions');

interface Summary {
  label: string;
  passRate: number;
  attempts: number;
  passed: number;
  crashed: number;
  unparsedCalls: number;
  invalidArgs: number;
  unknownTools: number;
}
interface Result {
  model: string;
  task: string;
  outcome: string;
  sessionId?: string;
  checkOutput: string;
  error?: string;
}

function jsonLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function done(stdout: string): { run: { id: string; status: string }; summary: Summary[] } {
  const last = jsonLines(stdout).find((l) => l.type === 'eval_done');
  if (!last) throw new Error(`no eval_done line in:\n${stdout}`);
  return last as never;
}

/** A suite folder of the tasks given: name to [task.md, check script]. */
async function writeSuite(dir: string, tasks: Record<string, [string, string]>): Promise<string> {
  for (const [name, [prompt, check]] of Object.entries(tasks)) {
    await mkdir(join(dir, name, 'files'), { recursive: true });
    await writeFile(join(dir, name, 'task.md'), prompt);
    await writeFile(join(dir, name, 'files', 'start.txt'), 'start\n');
    await writeFile(join(dir, name, 'check'), `#!/bin/sh\n${check}\n`);
    await chmod(join(dir, name, 'check'), 0o755);
  }
  return dir;
}

describe('hearth eval through the installed bin', () => {
  const cli = useCliHarness('acc-eval');

  it('scores a model that does the built-in tasks 100% and one that only answers 0%, and keeps both', async () => {
    const tasks = (await readdir(SOLUTIONS)).map((f) => f.replace(/\.sh$/, '')).sort();
    const solver: TurnInput[] = [];
    for (const task of tasks) {
      const command = await readFile(join(SOLUTIONS, `${task}.sh`), 'utf8');
      solver.push(reply().tool('shell', { command }), reply().text('Done.'));
    }
    const talker = tasks.map(() => reply().text('Done: I have taken care of it.'));
    await cli.serve({ turns: [...solver, ...talker], models: ['solver', 'talker'] });
    const r = await cli.run(['eval', '--models', 'solver,talker', '--json'], {});
    expect(r.code, r.stderr).toBe(0);
    const { run, summary } = done(r.stdout);
    expect(run.status).toBe('finished');
    const by = Object.fromEntries(summary.map((s) => [s.label, s]));
    expect(by.solver).toMatchObject({
      attempts: tasks.length,
      passed: tasks.length,
      passRate: 1,
      crashed: 0,
    });
    expect(by.talker).toMatchObject({ attempts: tasks.length, passed: 0, passRate: 0, crashed: 0 });
    expect(by.solver).toMatchObject({ unparsedCalls: 0, invalidArgs: 0, unknownTools: 0 });

    // Kept: a later process lists it, shows its table and the model facts, and opens a transcript.
    const shown = await cli.run(['eval', 'show', run.id]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/solver: solver on \S+ at http:\/\/127\.0\.0\.1:\d+\/v1, window \d+/);
    expect(shown.stdout).toMatch(/solver\s+100%/);
    expect(shown.stdout).toMatch(/talker\s+0%/);
    const detail = JSON.parse((await cli.run(['eval', 'show', run.id, '--json'])).stdout) as {
      results: Result[];
    };
    const session = detail.results.find((x) => x.model === 'solver' && x.task === 'fix-js-test')!.sessionId!;
    const transcript = await cli.run(['sessions', 'show', session]);
    expect(transcript.code).toBe(0);
    expect(transcript.stdout).toContain('node test/slug.test.js');
  }, 400_000);

  it('runs a custom suite folder: malformed calls and crashes are counted, runs compare after a restart, a check stays in its workspace', async () => {
    const outside = join(cli.home, 'outside.txt');
    const secret = join(cli.home, 'secret.txt');
    await writeFile(secret, 'the-secret-value\n');
    const suite = await writeSuite(await cli.tempDir('suite'), {
      'write-hello': ['Write hello to hello.txt.', 'grep -qx hello hello.txt'],
      escape: ['Do nothing.', `echo escaped > ${outside}; cat ${secret}; echo "home: $HOME"; ls ~ ; exit 0`],
    });
    // Tasks run in name order: escape, then write-hello.
    const turns = [
      // clumsy: nothing to do for escape; three broken calls, then the work
      reply().text('Nothing to do.'),
      reply()
        .tool('shell', '{"command": ')
        .tool('no_such_tool', {})
        .tool('write_file', { file: 'hello.txt' }),
      reply().tool('write_file', { path: 'hello.txt', content: 'hello\n' }),
      reply().text('Done.'),
      // broken: the server fails on its second task
      reply().text('Nothing to do.'),
      reply().httpError(400, { body: '{"error":"model crashed"}' }),
    ];
    await cli.serve({ turns, models: ['clumsy', 'broken'] });
    const first = await cli.run(['eval', '--suite', suite, '--models', 'clumsy,broken', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const a = done(first.stdout);
    const by = Object.fromEntries(a.summary.map((s) => [s.label, s]));
    expect(by.clumsy).toMatchObject({
      attempts: 2,
      passed: 2,
      unparsedCalls: 1,
      unknownTools: 1,
      invalidArgs: 1,
    });
    expect(by.broken).toMatchObject({ attempts: 2, crashed: 1, passed: 1 });

    const results = (
      JSON.parse((await cli.run(['eval', 'show', a.run.id, '--json'])).stdout) as { results: Result[] }
    ).results;
    const escaped = results.find((x) => x.task === 'escape' && x.model === 'clumsy')!;
    expect(escaped.checkOutput).not.toContain('the-secret-value');
    await expect(readFile(outside, 'utf8')).rejects.toThrow();
    const crashed = results.find((x) => x.model === 'broken' && x.outcome === 'crashed')!;
    expect(crashed.task).toBe('write-hello');
    expect(crashed.error).toBeTruthy();

    // A second run, one task; then a third process lists and compares both.
    cli.server.push(
      reply().tool('write_file', { path: 'hello.txt', content: 'hello\n' }),
      reply().text('Done.'),
    );
    const second = await cli.run([
      'eval',
      '--suite',
      suite,
      '--tasks',
      'write-*',
      '--models',
      'clumsy',
      '--json',
    ]);
    const b = done(second.stdout);
    expect(b.summary[0]).toMatchObject({ label: 'clumsy', attempts: 1, passed: 1 });
    const listed = JSON.parse((await cli.run(['eval', 'list', '--json'])).stdout) as Array<{
      run: { id: string };
    }>;
    expect(listed.map((x) => x.run.id)).toEqual([b.run.id, a.run.id]);
    const compared = await cli.run(['eval', 'compare', a.run.id, b.run.id]);
    expect(compared.code, compared.stderr).toBe(0);
    expect(compared.stdout).toMatch(new RegExp(`${a.run.id}.*clumsy\\s+100%`));
    expect(compared.stdout).toMatch(new RegExp(`${a.run.id}.*broken\\s+50%`));
    expect(compared.stdout).toMatch(new RegExp(`${b.run.id}.*clumsy\\s+100%`));
    const listedText = await cli.run(['eval', 'list']);
    expect(listedText.stdout).toContain(a.run.id);
  }, 200_000);

  it('an interrupted run keeps the results that finished and says it was interrupted', async () => {
    const suite = await writeSuite(await cli.tempDir('suite'), {
      'a-first': ['Write hello to hello.txt.', 'grep -qx hello hello.txt'],
      'b-second': ['Write hello to hello.txt.', 'grep -qx hello hello.txt'],
    });
    await cli.serve({
      turns: [
        reply().tool('write_file', { path: 'hello.txt', content: 'hello\n' }),
        reply().text('Done.'),
        reply().hang(),
      ],
      models: ['slow'],
    });
    const running = cli.start(['eval', '--suite', suite, '--models', 'slow', '--json']);
    let out = '';
    running.child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    await waitUntil(() => out.includes('"eval_result"'), 'the first result', 60_000);
    await cli.server.waitForRequests(3);
    running.child.kill('SIGINT');
    const r = await withDeadline(running.result, 'the interrupted eval to exit', 30_000);
    expect(r.code).toBe(130);
    const start = jsonLines(out).find((l) => l.type === 'eval_start') as { run: { id: string } };
    const shown = JSON.parse((await cli.run(['eval', 'show', start.run.id, '--json'])).stdout) as {
      run: { status: string };
      results: Result[];
    };
    expect(shown.run.status).toBe('interrupted');
    expect(shown.results.map((x) => [x.task, x.outcome])).toEqual([['a-first', 'passed']]);
  });

  describe.skipIf(chromiumMissing !== undefined)('in the gateway and the web UI', () => {
    let browser: Browser | undefined;
    afterAll(async () => {
      await browser?.close();
    });

    it("a kept run's table comes from /api/evals and shows in the web UI", async () => {
      const suite = await writeSuite(await cli.tempDir('suite'), {
        hello: ['Write hello to hello.txt.', 'grep -qx hello hello.txt'],
      });
      await cli.serve({
        turns: [reply().tool('write_file', { path: 'hello.txt', content: 'hello\n' }), reply().text('Done.')],
        models: ['webby'],
      });
      const ran = done((await cli.run(['eval', '--suite', suite, '--models', 'webby', '--json'])).stdout);
      const gw = await startServe(cli);
      const listed = await gw.json<{ runs: Array<{ run: { id: string }; summary: Summary[] }> }>(
        '/api/evals',
      );
      expect(listed.runs.map((r) => r.run.id)).toEqual([ran.run.id]);
      const one = await gw.json<{ summary: Summary[]; results: Result[] }>(
        `/api/evals/${ran.run.id.slice(0, 5)}`,
      );
      expect(one.summary[0]).toMatchObject({ label: 'webby', passRate: 1 });
      expect(one.results[0]).toMatchObject({ task: 'hello', outcome: 'passed' });
      expect((await gw.http('/api/evals/nosuchrun')).status).toBe(404);

      browser = await launchChromium();
      const page = await loggedInPage(browser, gw);
      const row = page.locator(`table.eval-table[data-run="${ran.run.id}"] tr[data-model="webby"]`);
      await row.waitFor();
      expect(await row.textContent()).toContain('100%');
    });
  });
});
