/**
 * A private PostgreSQL server for one test file: its own cluster in a temp folder, on a free
 * loopback port, stopped (and deleted) afterwards. Never a system service.
 *
 * PostgreSQL refuses to run as root, and CI runs as root: the cluster then belongs to `nobody`
 * and its programs run under that identity (setpriv, from util-linux).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { closedPort } from './net.js';
import { waitUntil } from './wait.js';

export interface TestPostgres {
  /** postgres://... for the `hearth` database. */
  url: string;
  port: number;
  /** A new empty database on this server, for a test that must start from nothing: its URL. */
  database(): Promise<string>;
  /** Stops the server at once (fast shutdown) and starts it again on the same port and data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** The folder holding initdb and postgres, or undefined when PostgreSQL is not installed. */
export function postgresBin(): string | undefined {
  if (process.env.HEARTH_PG_BIN) return process.env.HEARTH_PG_BIN;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}

const NOBODY = { uid: 65534, gid: 65534 };

function asOwner(bin: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [bin, args];
  return ['setpriv', [`--reuid=${NOBODY.uid}`, `--regid=${NOBODY.gid}`, '--clear-groups', bin, ...args]];
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed (apt-get install postgresql); .ci/run installs it.');
  const dir = mkdtempSync(join(tmpdir(), 'hearth-pg-'));
  const data = join(dir, 'data');
  if (process.getuid?.() === 0) {
    chownSync(dir, NOBODY.uid, NOBODY.gid);
    chmodSync(dir, 0o700);
  }
  const [initdb, initArgs] = asOwner(join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'hearth',
    '--auth=trust',
    '--no-sync',
    '-E',
    'UTF8',
  ]);
  execFileSync(initdb, initArgs, { stdio: 'ignore' });
  // Free now; PostgreSQL binds it a moment later (a race a test run can live with).
  const port = await closedPort();
  let child: ChildProcess | undefined;

  const start = async () => {
    const [postgres, args] = asOwner(join(bin, 'postgres'), [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'max_connections=200',
    ]);
    const proc = spawn(postgres, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    proc.stderr?.on('data', (chunk) => {
      log = (log + chunk).slice(-4000);
    });
    child = proc;
    await waitUntil(() => {
      if (proc.exitCode !== null) throw new Error(`postgres exited: ${log}`);
      return log.includes('ready to accept connections');
    }, 'PostgreSQL to accept connections');
  };

  /** SIGINT: a fast shutdown that keeps the data (restart); SIGQUIT: at once, the data goes anyway. */
  const stopServer = async (signal: 'SIGINT' | 'SIGQUIT') => {
    const proc = child;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill(signal);
    await exited;
  };

  await start();
  const [createdb, createArgs] = asOwner(join(bin, 'createdb'), [
    '-h',
    '127.0.0.1',
    '-p',
    String(port),
    '-U',
    'hearth',
    'hearth',
  ]);
  execFileSync(createdb, createArgs, { stdio: 'ignore' });
  const url = `postgres://hearth@127.0.0.1:${port}/hearth`;
  let databases = 0;
  return {
    url,
    port,
    async database() {
      const name = `test_${++databases}`;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`create database ${name}`);
      } finally {
        await client.end();
      }
      return url.replace(/\/hearth$/, `/${name}`);
    },
    async restart() {
      await stopServer('SIGINT');
      await start();
    },
    async stop() {
      // A fast shutdown waits for every backend to end, which on a loaded machine can outlast a hook.
      await stopServer('SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The environment of a Hearth process as on a machine of its own (its home and session database
 * under `home`) sharing the database at `url`, with the scripted model at `baseUrl`.
 */
export function machineEnv(home: string, url: string, baseUrl: string): Record<string, string> {
  return {
    HOME: home,
    HEARTH_HOME: join(home, '.hearth'),
    HEARTH_DATABASE_URL: url,
    HEARTH_BASE_URL: baseUrl,
    HEARTH_MODEL: 'scripted-model',
    HEARTH_SANDBOX: 'none',
    HEARTH_CONTEXT_WINDOW: '32000',
  };
}
