import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { atPrompt, startOnPty } from '../../test/support/pty.js';
import { reply, startScriptedServer } from '../../test/support/scripted-server.js';
import { ms, type Row, ratio, type Spread, spread, timeRuns } from '../stats.js';

const CLI = 'dist/cli/main.js';

/** Wall time of `node -e 0`: what any Node program pays before its first line runs. */
async function nodeBaseline(runs: number): Promise<Spread> {
  return spread(
    await timeRuns(
      runs,
      () => new Promise((resolve) => spawn(process.execPath, ['-e', '0']).on('exit', resolve)),
    ),
  );
}

/** From spawning the one-shot CLI to its first chat request reaching the server. */
async function toFirstRequest(runs: number): Promise<Spread> {
  const home = await mkdtemp(join(tmpdir(), 'hearth-bench-home-'));
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    let arrived: (() => void) | undefined;
    const first = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const server = await startScriptedServer({
      turns: [reply().text('ok')],
      onRequest: (r) => {
        if (r.path.endsWith('/chat/completions')) arrived?.();
      },
    });
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, '--base-url', server.baseUrl, '-m', 'm', 'hi'], {
      env: { PATH: process.env.PATH, HOME: home, HEARTH_HOME: join(home, '.hearth') },
      stdio: 'ignore',
    });
    await first;
    samples.push(performance.now() - started);
    await new Promise((resolve) => child.on('exit', resolve));
    await server.close();
  }
  return spread(samples);
}

/** From spawning `hearth` on a pseudo-terminal to its prompt being drawn. */
async function toReplPrompt(runs: number): Promise<Spread> {
  const home = await mkdtemp(join(tmpdir(), 'hearth-bench-home-'));
  const server = await startScriptedServer({ turns: [] });
  const samples: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const term = startOnPty(['--base-url', server.baseUrl, '-m', 'm'], {
        cwd: home,
        env: { HOME: home, HEARTH_HOME: join(home, '.hearth') },
      });
      const started = performance.now();
      await term.waitFor(atPrompt, 20_000);
      samples.push(performance.now() - started);
      term.kill();
      await term.exited;
    }
  } finally {
    await server.close();
  }
  return spread(samples);
}

export async function startupFigures(): Promise<{ rows: Row[]; json: Record<string, unknown> }> {
  const runs = 10;
  const baseline = await nodeBaseline(runs);
  const oneShot = await toFirstRequest(runs);
  const repl = await toReplPrompt(runs);
  return {
    rows: [
      {
        figure: 'cold start: one-shot to first request',
        value: ms(oneShot),
        baseline: `node -e 0: ${ms(baseline)}`,
        ratio: ratio(oneShot, baseline),
      },
      {
        figure: 'cold start: REPL to its prompt',
        value: ms(repl),
        baseline: `node -e 0: ${ms(baseline)}`,
        ratio: ratio(repl, baseline),
      },
    ],
    json: { nodeBaselineMs: baseline, oneShotToFirstRequestMs: oneShot, replToPromptMs: repl },
  };
}
