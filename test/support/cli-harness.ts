/**
 * The one set-up for tests that run the built CLI: a fresh workspace and home per test, the
 * scripted server, the environment that points the CLI at both, and a teardown that kills what is
 * still running before it removes the directories.
 *
 *   const cli = useCliHarness('repl');
 *   it('...', async () => {
 *     await cli.serve([reply().text('Hi.')]);
 *     const r = await cli.run(['hello']);
 *   });
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, vi } from 'vitest';
import { type CliResult, type CliRun, startCli } from './cli.js';
import { atPrompt, startOnPty, type Terminal } from './pty.js';
import {
  type ScriptedServer,
  type ScriptedServerOptions,
  startScriptedServer,
  type TurnInput,
} from './scripted-server.js';
import { withDeadline } from './wait.js';

type Env = Record<string, string | undefined>;

export interface RunOptions {
  /** The workspace unless given. */
  cwd?: string;
  /** Added to (or, with undefined, removed from) the harness's environment. */
  env?: Env;
  stdin?: string;
}

export interface CliHarness {
  /** This test's workspace (a real path: no symlinks to trip path comparisons). */
  readonly workspace: string;
  /** This test's HOME; the CLI keeps its database and history in `hearthHome` below it. */
  readonly home: string;
  readonly hearthHome: string;
  /** The scripted server `serve` started; throws before that. */
  readonly server: ScriptedServer;
  /** Starts the scripted server (closing one started before); the CLI is pointed at it from then on. */
  serve(script?: TurnInput[] | ScriptedServerOptions): Promise<ScriptedServer>;
  /** HOME, HEARTH_HOME and, once serving, HEARTH_BASE_URL; `extra` wins. */
  env(extra?: Env): Env;
  /** Runs the built CLI to its end. */
  run(args: string[], opts?: RunOptions): Promise<CliResult>;
  /** Starts the built CLI; teardown kills it if it still runs. */
  start(args: string[], opts?: RunOptions): CliRun;
  /** Starts the built CLI on a pseudo-terminal; teardown kills it if it still runs. */
  terminal(args: string[], opts?: RunOptions & { size?: { cols: number; rows: number } }): Terminal;
  /** Serves `script`, starts the REPL on a terminal and waits for its first prompt. */
  repl(script: TurnInput[] | ScriptedServerOptions, args?: string[]): Promise<Terminal>;
  /** One more directory for this test, removed at teardown. */
  tempDir(label: string): Promise<string>;
}

/**
 * A test here may start the CLI ten times, and each start is a Node process that costs a second of
 * CPU: on a loaded 2-core machine a correct test then takes tens of seconds. The file's timeout is
 * raised to match; it only catches hangs, and every wait inside names what it waited for sooner.
 */
const CLI_TEST_TIMEOUT_MS = 90_000;

/** Registers the per-test set-up and teardown in the calling test file; `label` names the temp dirs. */
export function useCliHarness(label: string): CliHarness {
  vi.setConfig({ testTimeout: CLI_TEST_TIMEOUT_MS, hookTimeout: CLI_TEST_TIMEOUT_MS });
  let state:
    | {
        workspace: string;
        home: string;
        server?: ScriptedServer;
        dirs: string[];
        running: { kill(): void; exited: Promise<unknown> }[];
      }
    | undefined;
  const current = () => {
    if (!state) throw new Error('useCliHarness: only usable inside a test');
    return state;
  };
  const tempDir = async (name: string) => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), `hearth-${name}-`)));
    current().dirs.push(dir);
    return dir;
  };

  beforeEach(async () => {
    state = { workspace: '', home: '', dirs: [], running: [] };
    state.workspace = await tempDir(label);
    state.home = await tempDir(`${label}-home`);
  });
  afterEach(async () => {
    const s = current();
    state = undefined;
    for (const p of s.running) p.kill();
    // A killed CLI may still be writing into its home: let it go before the directory does.
    await withDeadline(Promise.all(s.running.map((p) => p.exited)), 'the CLI processes to exit');
    await s.server?.close();
    // On a terminal, what exits is `script`: the CLI under it, hung up, may still be leaving (the
    // REPL saves, the code cache is written at exit) while the directories go, so removal retries.
    for (const dir of s.dirs) await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  });

  const harness: CliHarness = {
    get workspace() {
      return current().workspace;
    },
    get home() {
      return current().home;
    },
    get hearthHome() {
      return join(current().home, '.hearth');
    },
    get server() {
      const server = current().server;
      if (!server) throw new Error('useCliHarness: call serve() first');
      return server;
    },
    async serve(script = {}) {
      const s = current();
      await s.server?.close();
      s.server = await startScriptedServer(Array.isArray(script) ? { turns: script } : script);
      return s.server;
    },
    env(extra = {}) {
      const s = current();
      return {
        HOME: s.home,
        HEARTH_HOME: join(s.home, '.hearth'),
        ...(s.server ? { HEARTH_BASE_URL: s.server.baseUrl } : {}),
        ...extra,
      };
    },
    run(args, opts = {}) {
      return harness.start(args, opts).result;
    },
    start(args, opts = {}) {
      const run = startCli(args, {
        cwd: opts.cwd ?? harness.workspace,
        env: harness.env(opts.env),
        stdin: opts.stdin,
      });
      current().running.push({ kill: () => run.child.kill('SIGKILL'), exited: run.result });
      return run;
    },
    terminal(args, opts = {}) {
      const term = startOnPty(args, {
        cwd: opts.cwd ?? harness.workspace,
        env: harness.env(opts.env),
        size: opts.size,
      });
      current().running.push(term);
      return term;
    },
    async repl(script, args = []) {
      await harness.serve(script);
      const term = harness.terminal(args);
      await term.waitFor(atPrompt);
      return term;
    },
    tempDir,
  };
  return harness;
}
