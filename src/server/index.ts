import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createAdaptorServer } from '@hono/node-server';
import { type WebSocket, WebSocketServer } from 'ws';
import { defaultDbPath, hearthHome } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { EventLog } from '../store/event-log.js';
import type { SchedulerStorage } from '../store/scheduler-storage.js';
import type { SessionStorage } from '../store/session-storage.js';
import { type Db, openDatabase } from '../store/sqlite/database.js';
import { openStorage, type Storage, sqliteStorage } from '../store/storage.js';
import { version as packageVersion } from '../util/version.js';
import { buildApp } from './app.js';
import { bindRefusal, Guard, newPin, newToken } from './guard.js';
import { SessionHub } from './hub.js';
import { GatewayMemory } from './memory-access.js';
import { GatewayPipeline } from './pipeline.js';
import { GatewayScheduler, type GatewaySchedulerSettings } from './scheduler.js';
import { DEFAULT_SOCKET_LIMITS, type SocketLimits } from './socket-client.js';
import { removeGatewayFile, writeGatewayFile } from './state-file.js';
import type { TurnRelay } from './turn-relay.js';
import { defaultWebRoot } from './web.js';

export { bindRefusal, isLoopback, newPin } from './guard.js';

export interface GatewayOptions {
  /** Every setting: `gateway` for the server, the rest for the sessions it runs. */
  config: Config;
  /** Where sessions created without a folder work. */
  workspace: string;
  /** The session database; default the config's (`~/.hearth/hearth.db`). The gateway closes it. */
  db?: Db;
  /**
   * Where session events are numbered and kept (`store/open-event-log.ts`); default the SQLite
   * log in `db`. With the shared PostgreSQL log, sessions other processes run are watched live.
   * The gateway closes it.
   */
  events?: EventLog;
  /**
   * Where sessions are kept (`store/storage.ts`); default the SQLite backend over `db`. The
   * gateway closes it. (Memory and the pipeline keep their tables in `db`.)
   */
  sessions?: SessionStorage;
  /**
   * The scheduler's records and wake-ups (`storage.scheduler()`, in the same backend as
   * `sessions`); default the SQLite tables in `db`.
   */
  schedulerRecords?: SchedulerStorage;
  /**
   * The process's Storage, whose owner closes it: memory, the pipelines and the work queue are
   * taken from it. Default the SQLite backend over `db`.
   */
  storage?: Storage;
  /**
   * With the shared database: turns queued to `hearth worker`s (`gateway.turns: workers`) and
   * orders sent on to workers running them. The gateway closes it.
   */
  remote?: TurnRelay;
  /**
   * Run the scheduler (jobs, the inbox, wake-ups) inside the gateway, as `hearth serve` does; an
   * object turns it on with these settings. Off by default: the cron and inbox routes then still
   * list, run now, toggle and queue, and a `hearth scheduler` elsewhere does the firing.
   */
  scheduler?: boolean | GatewaySchedulerSettings;
  /** The token clients must send; default `config.gateway.token`, else a new random one. */
  token?: string;
  /** How far a WebSocket client may fall behind before it is closed; default `DEFAULT_SOCKET_LIMITS`. */
  sockets?: Partial<SocketLimits>;
  /** The PIN a browser may log in with; default a new one when `config.gateway.pin` is set. */
  pin?: string;
  /** Where the URL and token are written for local clients; default <home>/gateway.json; false: nowhere. */
  stateFile?: string | false;
  /** The settings of a session in another folder; default the same `config` for every folder. */
  configFor?: (workspace: string) => Promise<{ config: Config; notes: string[] }>;
  /**
   * The Hearth home: user skills, `mcp.json`, USER.md and MEMORY.md, cron.json and the inbox, the state
   * file; default $HEARTH_HOME or ~/.hearth.
   */
  home?: string;
  version?: string;
  /** The built web UI; default the package's dist/web. */
  webRoot?: string;
  /** The clock usage ranges are measured against. */
  now?: () => number;
  /** Start-up facts and failures; never given the token. */
  log?: (line: string) => void;
  /** Told once the server listens: where, with what credentials (for the start-up banner). */
  onListening?: (info: ListeningInfo) => void;
}

export interface ListeningInfo {
  /** The URL local clients use. */
  url: string;
  /** The address bound. */
  address: string;
  port: number;
  token: string;
  /** True when the token was made up here (it is then only in the state file). */
  tokenGenerated: boolean;
  pin?: string;
  stateFile?: string;
}

/** The Node HTTP server, with `shutdown` to stop runs, close every connection and the store. */
export interface GatewayServer extends Server {
  shutdown(): Promise<void>;
  /** The web UI's URL with a one-time login code in its fragment, for opening a local browser. */
  loginLink(url: string): string;
}

/** Listening beyond loopback without a chosen token or PIN. */
export class GatewayConfigError extends Error {
  override name = 'GatewayConfigError';
}

/** WebSocket pings that find clients gone (a phone off the network) and drop them. */
const HEARTBEAT_MS = 30_000;

/**
 * The gateway: one process serving many sessions over HTTP, WebSocket and SSE. Returns the Node
 * server, not yet listening: `server.listen(port, host)`. Listening beyond loopback without a
 * token or PIN the user chose closes it again with a GatewayConfigError ('error' event).
 */
export function createServer(options: GatewayOptions): GatewayServer {
  const { config } = options;
  const settings = config.gateway;
  const version = options.version ?? packageVersion;
  const log = options.log ?? (() => {});
  const now = options.now ?? Date.now;
  const tokenGiven = options.token ?? settings.token;
  const token = tokenGiven ?? newToken();
  const pin = options.pin ?? (settings.pin ? newPin() : undefined);
  const home = options.home ?? hearthHome();
  const stateFile =
    options.stateFile === false ? undefined : (options.stateFile ?? join(home, 'gateway.json'));
  const guard = new Guard({ token, pin, origins: settings.origins, hosts: settings.hosts, now });
  const dbPath = options.db?.name ?? defaultDbPath(config);
  const db = options.db ?? openDatabase(dbPath);
  const local = sqliteStorage(db, dbPath, false);
  // Memory and the pipelines live where the config says: a Storage of the gateway's own over the
  // shared database when none was given, opened on first use and closed at shutdown.
  let own: Promise<Storage> | undefined;
  const storage = (): Promise<Storage> => {
    if (options.storage) return Promise.resolve(options.storage);
    if (!config.storage) return Promise.resolve(local);
    own ??= openStorage(config, { role: 'gateway' }).catch((err: unknown) => {
      own = undefined;
      throw err;
    });
    return own;
  };
  const hub = new SessionHub({
    db,
    events: options.events,
    sessions: options.sessions ?? local.sessions,
    // A Storage given stays its owner's to close; the default one over `db` is closed with the hub.
    ...(options.storage ? { storage: options.storage } : {}),
    config,
    workspace: options.workspace,
    configFor: options.configFor,
    home: options.home,
    now,
    approvalTimeoutMs: settings.approval_timeout * 1000,
    remote: options.remote,
    reflection: { say: log },
  });
  const memory = new GatewayMemory({
    storage,
    config,
    home,
    baseUrl: () => hub.currentModel.baseUrl,
    now,
  });
  const scheduler = new GatewayScheduler({
    storage: config.storage,
    runOn: config.scheduler.run_on,
    ...(typeof options.scheduler === 'object' ? options.scheduler : {}),
    ...(options.schedulerRecords ? { records: options.schedulerRecords } : {}),
    ...(options.storage?.kind === 'postgres' ? { shared: options.storage } : {}),
    db,
    dbPath,
    sessions: hub.store,
    home,
    workspace: hub.workspace,
    announce: (event, sessionId) => hub.activity(event, sessionId),
    log,
  });
  const pipeline = new GatewayPipeline({
    storage,
    config,
    announce: (event) => hub.activity(event, null),
    onProblem: log,
  });
  const app = buildApp({
    hub,
    guard,
    memory,
    scheduler,
    pipeline,
    evals: async () => (await storage()).evals(),
    version,
    now,
    hearthHome: home,
    origins: settings.origins,
    tokenFile: stateFile ?? 'the file the gateway was told to write',
    webRoot: options.webRoot ?? defaultWebRoot(),
    log,
    sockets: { ...DEFAULT_SOCKET_LIMITS, ...options.sockets },
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4 * 1024 * 1024 });
  const server = createAdaptorServer({ fetch: app.fetch, websocket: { server: wss } }) as GatewayServer;

  const alive = new WeakSet<WebSocket>();
  wss.on('connection', (ws) => {
    alive.add(ws);
    ws.on('pong', () => alive.add(ws));
  });
  const heartbeat = setInterval(() => {
    for (const ws of wss.clients) {
      if (!alive.has(ws)) ws.terminate();
      else {
        alive.delete(ws);
        ws.ping();
      }
    }
  }, HEARTBEAT_MS);
  heartbeat.unref();

  let written: Promise<void> = Promise.resolve();
  server.on('listening', () => {
    const { address, port } = server.address() as AddressInfo;
    const refusal = bindRefusal(address, { tokenGiven: tokenGiven !== undefined, pin: pin !== undefined });
    if (refusal) {
      server.close();
      server.emit('error', new GatewayConfigError(refusal));
      return;
    }
    guard.bound(address);
    void pipeline.start();
    // Only a gateway that really serves takes the scheduler's lease.
    if (options.scheduler !== undefined && options.scheduler !== false) scheduler.start();
    const url = `http://${urlHost(address)}:${port}`;
    const info: ListeningInfo = {
      url,
      address,
      port,
      token,
      tokenGenerated: tokenGiven === undefined,
      ...(pin ? { pin } : {}),
      ...(stateFile ? { stateFile } : {}),
    };
    written = stateFile
      ? writeGatewayFile(stateFile, {
          url,
          token,
          pid: process.pid,
          version,
          started_at: new Date(now()).toISOString(),
        })
      : Promise.resolve();
    written.then(
      () => options.onListening?.(info),
      (err: unknown) => log(`Could not write ${stateFile}: ${(err as Error).message}`),
    );
  });

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      clearInterval(heartbeat);
      await pipeline.stop();
      for (const ws of wss.clients) ws.close(1001, 'The gateway is shutting down.');
      // Before the hub closes the database the scheduler writes its runs' ends to.
      await scheduler.stop();
      await memory.close();
      await hub.close();
      await (await own?.catch(() => undefined))?.close();
      await written.catch(() => undefined);
      if (stateFile) await removeGatewayFile(stateFile, process.pid);
    })();
    return stopping;
  };
  server.on('close', () => void stop());
  server.loginLink = (url) => `${url}/#login=${guard.loginCode()}`;
  server.shutdown = async () => {
    const closed = server.listening
      ? new Promise<void>((resolve) => server.close(() => resolve()))
      : undefined;
    await stop();
    for (const ws of wss.clients) ws.terminate();
    server.closeAllConnections();
    await closed;
  };
  return server;
}

/** How a URL names the bound address; "any address" is reached locally through loopback. */
function urlHost(address: string): string {
  if (address === '0.0.0.0') return '127.0.0.1';
  if (address === '::') return '[::1]';
  return address.includes(':') ? `[${address}]` : address;
}
