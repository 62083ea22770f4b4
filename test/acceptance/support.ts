/**
 * What the acceptance tests share beyond the CLI harness (which runs the installed bin here):
 * `hearth serve` started and talked to, a browser page on it, and the record of which gateway
 * operations they used (setup/coverage.ts).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { type RawData, WebSocket } from 'ws';
import { type CliRun, servedAt } from '../support/cli.js';
import type { CliHarness, RunOptions } from '../support/cli-harness.js';
import type { WireMessage } from '../support/gateway.js';
import { withDeadline } from '../support/wait.js';
import { recordUse } from './setup/coverage.js';

export interface ServedGateway {
  /** http://127.0.0.1:PORT */
  url: string;
  token: string;
  run: CliRun;
  /** What `hearth serve` printed so far. */
  out(): string;
  /** fetch with the token and JSON content type; recorded as a use of the operation. */
  http(path: string, init?: RequestInit): Promise<Response>;
  /** GET or POST JSON, failing on a non-2xx status with the body in the message. */
  json<T = Record<string, unknown>>(path: string, body?: unknown, method?: string): Promise<T>;
  /** A WebSocket to `path` with the token, open. */
  /**
   * Opens a WebSocket; `onMessage` is attached before it opens, since a message the server sends at
   * once may come in the same read as the handshake and be emitted before an awaiting caller listens.
   */
  socket(path: string, onMessage?: (data: RawData) => void): Promise<WebSocket>;
  /** The OpenAPI document at /doc; its operations become the gateway surfaces coverage checks. */
  openApi(): Promise<{ paths: Record<string, Record<string, unknown>> }>;
}

/** Starts the installed `hearth serve` on a free loopback port and reads its token where local clients do. */
export async function startServe(
  cli: CliHarness,
  args: string[] = [],
  opts: RunOptions = {},
): Promise<ServedGateway> {
  const run = cli.start(['serve', '--port', '0', ...args], opts);
  const { url, out } = await servedAt(run);
  const { token } = JSON.parse(await readFile(join(cli.hearthHome, 'gateway.json'), 'utf8')) as {
    token: string;
  };
  const http = (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${token}`);
    if (init.body !== undefined) headers.set('content-type', 'application/json');
    recordUse({ kind: 'http', method: init.method ?? 'GET', path });
    return fetch(`${url}${path}`, { ...init, headers });
  };
  return {
    url,
    token,
    run,
    out,
    http,
    async json<T>(path: string, body?: unknown, method = body === undefined ? 'GET' : 'POST') {
      const response = await http(path, {
        method,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      return (text ? JSON.parse(text) : undefined) as T;
    },
    socket(path, onMessage) {
      recordUse({ kind: 'http', method: 'GET', path });
      const ws = new WebSocket(`${url.replace(/^http/, 'ws')}${path}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      if (onMessage) ws.on('message', onMessage);
      return new Promise((resolve, reject) => {
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      });
    },
    async openApi() {
      const document = (await (await http('/doc')).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      recordUse({
        kind: 'openapi',
        operations: Object.entries(document.paths).flatMap(([path, item]) =>
          Object.keys(item).map((method) => `${method} ${path}`),
        ),
      });
      return document;
    },
  };
}

/**
 * A new page on the gateway at `url`, logged in through its form with the token; every request and
 * WebSocket the page makes to the gateway is recorded as a use of its operation.
 */
export async function loggedInPage(
  browser: Browser,
  gw: Pick<ServedGateway, 'url' | 'token'>,
  options: { phone?: boolean } = {},
): Promise<Page> {
  const context = await browser.newContext({
    viewport: options.phone ? { width: 390, height: 844 } : { width: 1280, height: 800 },
    ...(options.phone ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
  });
  const page = await context.newPage();
  const origin = new URL(gw.url).origin;
  page.on('request', (request) => {
    const address = new URL(request.url());
    if (address.origin === origin)
      recordUse({ kind: 'http', method: request.method(), path: address.pathname });
  });
  page.on('websocket', (socket) => {
    recordUse({ kind: 'http', method: 'GET', path: new URL(socket.url()).pathname });
  });
  await page.goto(gw.url);
  await page.getByLabel('PIN or token').fill(gw.token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('header.topbar').waitFor();
  return page;
}

/** A WebSocket that keeps every message it got, waited on by content (never by time). */
export interface CollectedSocket {
  ws: WebSocket;
  messages: WireMessage[];
  send(message: object): void;
  /** The first message (received so far or later) that matches. */
  next(match: (m: WireMessage) => boolean): Promise<WireMessage>;
  /** The session's events received so far (those with a `seq`). */
  numbered(): WireMessage[];
}

/** Opens a WebSocket through `open` (e.g. `(on) => gw.socket(path, on)`) and keeps what it gets. */
export async function collect(
  open: (onMessage: (data: RawData) => void) => Promise<WebSocket>,
): Promise<CollectedSocket> {
  const messages: WireMessage[] = [];
  const waiters = new Set<() => void>();
  const ws = await open((data) => {
    messages.push(JSON.parse(String(data)) as WireMessage);
    for (const wake of waiters) wake();
  });
  return {
    ws,
    messages,
    send: (message) => ws.send(JSON.stringify(message)),
    next(match) {
      let look = () => {};
      const found = new Promise<WireMessage>((resolve) => {
        look = () => {
          const hit = messages.find(match);
          if (hit) resolve(hit);
        };
        waiters.add(look);
        look();
      });
      return withDeadline(
        found,
        () => `a matching message on ${ws.url}; got ${messages.map((m) => m.type).join(', ')}`,
      ).finally(() => waiters.delete(look));
    },
    numbered: () => messages.filter((m) => m.seq !== undefined),
  };
}
