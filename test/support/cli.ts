import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { recordUse } from '../acceptance/setup/coverage.js';
import { provided } from './provided.js';

export const cliPath = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

declare module 'vitest' {
  export interface ProvidedContext {
    /** The `hearth` bin installed from the packed tarball (test/acceptance/setup/install.ts). */
    hearthBin?: string;
    /** The prefix it was installed into (bin/, lib/node_modules/). */
    hearthPrefix?: string;
  }
}

/**
 * The command line that starts Hearth: in the acceptance project the bin `npm pack` and
 * `npm install -g` made, run by its own `#!` line as a user's shell runs it; elsewhere the
 * checkout's build, through this Node.
 */
export function hearthCommand(): string[] {
  const installed = provided('hearthBin');
  if (installed) return [installed];
  if (!existsSync(cliPath))
    throw new Error(`${cliPath} is missing: run npm run build first (npm test does).`);
  return [process.execPath, cliPath];
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRun {
  child: ReturnType<typeof spawn>;
  result: Promise<CliResult>;
}

/** Starts the built CLI as a real subprocess, with a clean HEARTH_* environment. */
export function startCli(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string | undefined>; stdin?: string } = {},
): CliRun {
  const [command, ...prefix] = hearthCommand();
  recordUse({ kind: 'argv', argv: args, terminal: false });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NO_COLOR: '1',
    ...opts.env,
  };
  const child = spawn(command!, [...prefix, ...args], {
    cwd: opts.cwd,
    env,
    stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => {
    stdout += d;
  });
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const result = new Promise<CliResult>((resolve) => {
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { child, result };
}

export function runCli(args: string[], opts: Parameters<typeof startCli>[1] = {}): Promise<CliResult> {
  return startCli(args, opts).result;
}

/** Resolves, once the banner of a started `hearth serve` is out, with the URL it printed and its output so far. */
export function servedAt(run: CliRun): Promise<{ url: string; out: () => string }> {
  let out = '';
  return new Promise((resolve, reject) => {
    run.child.stdout!.on('data', (d) => {
      out += d;
      const found = /listening on (http:\/\/[\d.:]+)/.exec(out);
      if (found && out.includes('Ctrl+C')) resolve({ url: found[1]!, out: () => out });
    });
    void run.result.then((r) => reject(new Error(`serve exited ${r.code}: ${r.stderr}`)));
  });
}
