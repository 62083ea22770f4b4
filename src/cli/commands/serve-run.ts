import { spawn } from 'node:child_process';
import { hostname, networkInterfaces } from 'node:os';
import { resolve } from 'node:path';
import { renderUnicodeCompact } from 'uqr';
import { defaultDbPath, type FlagSetting, hearthHome, loadConfig } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { describeIgnored } from '../../config/security.js';
import {
  bindRefusal,
  createServer,
  GatewayConfigError,
  isLoopback,
  type ListeningInfo,
  newPin,
} from '../../server/index.js';
import type { TurnRelay } from '../../server/turn-relay.js';
import { homeScope } from '../../store/scheduler-storage.js';
import { openDatabase } from '../../store/sqlite/database.js';
import { openStorage, type PostgresStorage } from '../../store/storage.js';
import { flagSettings, loadConfigFromFlags } from '../options.js';
import { visible } from '../sanitize.js';
import { UsageError } from '../usage-error.js';
import type { ServeFlags } from './serve.js';

/** Runs the gateway until Ctrl+C or SIGTERM; resolves to the exit code. */
export async function runServe(flags: ServeFlags): Promise<number> {
  const own: FlagSetting[] = [];
  const add = (key: string, value: unknown, name: string) => {
    if (value !== undefined) own.push({ key, value, name });
  };
  add('gateway.port', flags.port, '--port');
  add('gateway.host', flags.host, '--host');
  add('gateway.pin', flags.pin, '--pin');
  add('gateway.token', flags.token, '--token');
  const { config, ignored } = await loadConfigFromFlags(flags, own);
  const { host, port } = config.gateway;
  const err = (line: string) => process.stderr.write(`${visible(line)}\n`);
  for (const note of describeIgnored(ignored)) err(note);
  const refusal = bindRefusal(host, {
    tokenGiven: config.gateway.token !== undefined,
    pin: config.gateway.pin,
  });
  if (refusal) throw new UsageError(refusal);
  if (config.gateway.turns === 'workers' && !config.storage)
    throw new UsageError(
      'gateway.turns: workers queues turns in the shared database, and none is configured. Set storage: postgres://USER@HOST:5432/DB (or HEARTH_DATABASE_URL), or gateway.turns: here.',
    );

  const workspace = resolve(flags.workspace);
  const sessionFlags = flagSettings(flags);
  const db = openDatabase(defaultDbPath(config));
  const who = `hearth serve on ${hostname()} (pid ${process.pid})`;
  // Sessions, their run leases and their events in one backend: with a shared database, sessions
  // other processes run (hearth worker) are listed and stream here live, read-only while they run.
  const storage = await openStorage(config, { db, holder: { label: who } }).catch((error: unknown) => {
    db.close();
    throw new UsageError((error as Error).message);
  });
  const events = await storage.events({ writer: who, onProblem: err });
  const schedulerRecords = await storage.scheduler({ scope: homeScope(hearthHome()) });
  const remote = storage.kind === 'postgres' ? await turnRelay(config, storage, err) : undefined;
  const server = createServer({
    config,
    workspace,
    db,
    sessions: storage.sessions,
    storage,
    schedulerRecords,
    events,
    remote,
    pin: config.gateway.pin ? newPin() : undefined,
    scheduler: flags.scheduler,
    configFor: async (folder) => {
      const loaded = await loadConfig({ workspace: folder, flags: sessionFlags });
      return { config: loaded.config, notes: describeIgnored(loaded.ignored) };
    },
    log: err,
    onListening: (info) => {
      const where = storage.sessions.location;
      // The code logs in whoever uses it first, so it is printed only where the user who started
      // the gateway reads it: a terminal, not output kept in a file or a log others may read later.
      const link = process.stdout.isTTY ? server.loginLink(info.url) : undefined;
      process.stdout.write(banner(info, where, workspace, flags.scheduler, link));
      if (flags.open) openBrowser(server.loginLink(info.url), err);
    },
  });
  await new Promise<void>((done, fail) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      void server.shutdown();
      fail(listenError(error, host, port));
    });
    server.listen(port, host, () => done());
  });

  await new Promise<void>((done) => {
    let signals = 0;
    const stop = () => {
      // A second Ctrl+C means "now": do not wait for runs to wind down.
      if (++signals > 1) process.exit(130);
      err('Stopping the gateway...');
      server
        .shutdown()
        .then(() => storage.close())
        .then(done, done);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  return 0;
}

/**
 * With the shared database, the relay of turns to `hearth worker`s: it queues them with
 * `gateway.turns: workers`, and sends steer, abort and approvals on to workers running any.
 */
async function turnRelay(
  config: Config,
  shared: PostgresStorage,
  err: (line: string) => void,
): Promise<TurnRelay> {
  const { turns, turn_tags: tags } = config.gateway;
  const [{ TurnQueue }, { TurnRelay }] = await Promise.all([
    import('../../cluster/turn-queue.js'),
    import('../../server/turn-relay.js'),
  ]);
  return new TurnRelay(new TurnQueue(shared.pool, shared.url, err), { dispatch: turns === 'workers', tags });
}

/**
 * Opens `url` with the desktop's opener. The link's one-time code is in the fragment, so the
 * browser never sends it anywhere; it shows in the process list only until the browser has used it.
 */
function openBrowser(url: string, err: (line: string) => void): void {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  const child = spawn(command, args, { stdio: 'ignore', detached: true });
  child.on('error', () =>
    err(`Could not open a browser (${command}); open the URL above and log in with the token or PIN.`),
  );
  child.unref();
}

function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  if (error instanceof GatewayConfigError) return new UsageError(error.message);
  if (error.code === 'EADDRINUSE') {
    return new UsageError(
      `Port ${port} on ${host} is in use${port === 8000 ? ' (vLLM listens there by default)' : ''}. Choose another: hearth serve --port ${port + 1}`,
    );
  }
  if (error.code === 'EADDRNOTAVAIL')
    return new UsageError(`This machine has no address ${host}. Use 127.0.0.1, 0.0.0.0 or one of its own.`);
  if (error.code === 'EACCES')
    return new UsageError(
      `Not allowed to listen on port ${port}; ports below 1024 need privileges. Use 8000 or above.`,
    );
  return error;
}

/** The address a phone on the same network reaches this machine by, when the gateway listens on all. */
function lanAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) if (entry.family === 'IPv4' && !entry.internal) return entry.address;
  }
  return undefined;
}

/**
 * What the user needs to connect: the URL, a one-time login link (at a terminal), where the token
 * is (never the token), the PIN and a QR code.
 */
function banner(
  info: ListeningInfo,
  dbPath: string,
  workspace: string,
  scheduler: boolean,
  link: string | undefined,
): string {
  const any = info.address === '0.0.0.0' || info.address === '::';
  const lan = any ? lanAddress() : undefined;
  const remote = lan ? `http://${lan}:${info.port}/` : isLoopback(info.address) ? undefined : `${info.url}/`;
  const lines = [
    `Hearth gateway listening on ${info.url}${lan ? ` (on your network: ${remote})` : ''}`,
    link
      ? `  open the web UI: ${link}  (one-time link: it logs in one browser; others log in with the token or PIN)`
      : '  web UI: log in with the token or PIN (at a terminal a one-time login link is printed here; --open opens one)',
    `  sessions: ${dbPath}, new ones in ${workspace}`,
    `  API: ${info.url}/doc (OpenAPI) · WebSocket: ${info.url.replace(/^http/, 'ws')}/ws/<session>`,
    scheduler
      ? '  scheduler: on (jobs, the inbox and wake-ups run here; GET /api/cron)'
      : '  scheduler: off (--no-scheduler)',
    info.tokenGenerated
      ? `  token: in ${info.stateFile ?? 'memory only'} (local clients read it there)`
      : '  token: the one you gave',
  ];
  if (info.pin) {
    lines.push(`  PIN: ${info.pin}  (log in at the URL; PIN login switches off after 10 wrong tries)`);
    if (remote) lines.push(`  Scan to open ${remote}:`, '', renderUnicodeCompact(remote, { border: 1 }));
  }
  lines.push('Ctrl+C stops it.', '');
  return lines.map((line) => visible(line)).join('\n');
}
