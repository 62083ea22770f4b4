import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { importNodeLlamaCpp, isInstalled } from '../../src/llm/embedded/node-llama-cpp.js';
import { reply, startScriptedServer } from '../../test/support/scripted-server.js';
import { writeTinyLlamaGguf } from '../../test/support/tiny-gguf.js';
import { type Figures, ms, ratio, takingTurns } from '../stats.js';

const CLI = resolve('dist/cli/main.js');
/** Each embedded run loads the model and evaluates the whole first prompt on the CPU: few runs. */
const RUNS = 3;

/** From spawning `hearth --json ARGS "hi"` in a fresh home to the first text_delta on its stdout. */
function toFirstToken(args: string[], files: Record<string, string>): () => Promise<number> {
  return async () => {
    const home = await mkdtemp(join(tmpdir(), 'hearth-bench-embedded-'));
    try {
      await mkdir(join(home, '.hearth'), { recursive: true });
      for (const [name, text] of Object.entries(files)) await writeFile(join(home, '.hearth', name), text);
      const started = performance.now();
      const child = spawn(process.execPath, [CLI, '--json', ...args, 'hi'], {
        cwd: home,
        env: { PATH: process.env.PATH, HOME: home, HEARTH_HOME: join(home, '.hearth') },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const took = await new Promise<number>((done, fail) => {
        createInterface({ input: child.stdout }).on('line', (line) => {
          if (line.includes('"type":"text_delta"')) done(performance.now() - started);
        });
        child.on('exit', (code) => fail(new Error(`hearth exited (${code}) before its first token`)));
      });
      if (child.exitCode === null) child.kill();
      await new Promise((resolve) => (child.exitCode === null ? child.on('exit', resolve) : resolve(null)));
      return took;
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  };
}

/**
 * Issue 24: the embedded path's cold start (process start to first token) on the generated tiny
 * model, beside the HTTP path's on the scripted server (which answers at once), taking turns.
 */
export async function embeddedFigures(dir: string): Promise<Figures> {
  const lib = await importNodeLlamaCpp();
  if (!isInstalled(lib)) {
    return {
      rows: [{ figure: 'cold start: embedded model to first token', value: `not measured: ${lib.missing}` }],
      json: {},
    };
  }
  const model = join(dir, 'bench-tiny.gguf');
  writeTinyLlamaGguf(model);
  const server = await startScriptedServer({
    turns: Array.from({ length: RUNS + 1 }, () => reply().text('ok')),
  });
  const config = { 'config.yml': 'max_tokens: 4\ntemperature: 0\nmemory:\n  enabled: false\n' };
  try {
    const [http, embedded] = await takingTurns(RUNS, [
      toFirstToken(['--base-url', server.baseUrl, '-m', 'm'], config),
      toFirstToken(['--model', model], config),
    ]);
    if (!http || !embedded) throw new Error('no samples');
    return {
      rows: [
        { figure: 'cold start: HTTP server to first token', value: ms(http) },
        {
          figure: 'cold start: embedded model to first token',
          value: ms(embedded),
          baseline: `HTTP: ${ms(http)}`,
          ratio: ratio(embedded, http),
        },
      ],
      json: { embeddedColdStartMs: embedded.median, httpColdStartMs: http.median },
    };
  } finally {
    await server.close();
  }
}
