/**
 * `hearth eval --parallel N` through the installed bin: N attempts are in flight at once (the
 * scripted server holds both first replies until the test has seen both), and both are checked.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';
import { withDeadline } from '../support/wait.js';

describe('hearth eval --parallel through the installed bin', () => {
  const cli = useCliHarness('acc-eval-parallel');

  it('runs two attempts at once, and checks both', async () => {
    const suite = await cli.tempDir('suite');
    for (const name of ['a-hello', 'b-hello']) {
      await mkdir(join(suite, name), { recursive: true });
      await writeFile(join(suite, name, 'task.md'), 'Write hello to hello.txt.');
      await writeFile(join(suite, name, 'check'), '#!/bin/sh\ngrep -qx hello hello.txt\n');
      await chmod(join(suite, name, 'check'), 0o755);
    }
    const write = () => reply().tool('write_file', { path: 'hello.txt', content: 'hello\n' }).holdAfter(0);
    await cli.serve({ turns: [write(), write(), reply().text('Done.'), reply().text('Done.')] });
    const running = cli.start(['eval', '--suite', suite, '--parallel', '2', '--json']);
    // Both first requests are held at once: with one attempt at a time the second never comes.
    await cli.server.waitForHolds(2);
    cli.server.release();
    cli.server.release();
    const r = await withDeadline(running.result, 'the eval to finish', 120_000);
    expect(r.code, r.stderr).toBe(0);
    const done = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { type: string; summary?: Array<{ attempts: number; passed: number }> })
      .find((l) => l.type === 'eval_done');
    expect(done?.summary?.[0]).toMatchObject({ attempts: 2, passed: 2 });
  }, 180_000);
});
