import { unlink } from 'node:fs/promises';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { type AddressPolicy, checkAddress, guardedLookup, hostAllowed } from './address-policy.js';

/**
 * Per-domain network for sandboxed commands (`sandbox.network: ["registry.npmjs.org", ...]`). The
 * sandbox keeps its own empty network namespace; a small bridge inside (BRIDGE_SCRIPT) listens on
 * its loopback and hands every connection over a Unix socket to this proxy on the host, which
 * reads the request head (CONNECT host:port, or an absolute-form HTTP request), refuses hosts not
 * on the list, and connects through the same address checks as web_fetch. A program that ignores
 * the proxy variables simply has no network.
 */
export interface DomainProxy {
  socketPath: string;
  close(): Promise<void>;
}

const MAX_HEAD_BYTES = 16 * 1024;

export async function startDomainProxy(opts: {
  socketPath: string;
  domains: readonly string[];
  policy: AddressPolicy;
}): Promise<DomainProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    readHead(client).then(
      (got) => got && forward(client, got.head, got.rest, opts, sockets),
      () => client.destroy(),
    );
  });
  await unlink(opts.socketPath).catch(() => {});
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.socketPath, resolve);
  });
  return {
    socketPath: opts.socketPath,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function readHead(client: net.Socket): Promise<{ head: string; rest: Buffer } | undefined> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        client.off('data', onData);
        client.pause();
        resolve({ head: buf.subarray(0, end + 4).toString('latin1'), rest: buf.subarray(end + 4) });
      } else if (buf.length > MAX_HEAD_BYTES) {
        client.off('data', onData);
        reject(new Error('request head too long'));
      }
    };
    client.on('data', onData);
    client.once('end', () => resolve(undefined));
  });
}

function refuse(client: net.Socket, status: string, why: string): void {
  client.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nhearth: ${why}\n`);
}

function forward(
  client: net.Socket,
  head: string,
  rest: Buffer,
  opts: { domains: readonly string[]; policy: AddressPolicy },
  sockets: Set<net.Socket>,
): void {
  const [requestLine = '', ...headerLines] = head.split('\r\n');
  const [method = '', target = '', version = 'HTTP/1.1'] = requestLine.split(' ');
  const connect = method.toUpperCase() === 'CONNECT';
  let host: string;
  let port: number;
  let firstBytes: Buffer;
  try {
    if (connect) {
      const url = new URL(`http://${target}`);
      host = url.hostname;
      port = Number(url.port || 443);
      firstBytes = rest;
    } else {
      const url = new URL(target);
      if (url.protocol !== 'http:') throw new Error('not http');
      host = url.hostname;
      port = Number(url.port || 80);
      // The origin server wants the path alone on the request line.
      const line = `${method} ${url.pathname}${url.search} ${version}`;
      firstBytes = Buffer.concat([Buffer.from([line, ...headerLines].join('\r\n'), 'latin1'), rest]);
    }
  } catch {
    refuse(client, '400 Bad Request', `cannot read the request target ${JSON.stringify(target)}`);
    return;
  }
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (!hostAllowed(opts.domains, bare)) {
    refuse(client, '403 Forbidden', `${bare} is not in sandbox.network (the domains commands may reach)`);
    return;
  }
  try {
    if (ipaddr.isValid(bare)) checkAddress(opts.policy, bare, bare);
  } catch (err) {
    refuse(client, '403 Forbidden', (err as Error).message);
    return;
  }
  const upstream = net.connect({ host: bare, port, lookup: guardedLookup(opts.policy) as never });
  let connected = false;
  sockets.add(upstream);
  upstream.on('close', () => sockets.delete(upstream));
  upstream.once('connect', () => {
    connected = true;
    if (connect) client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (firstBytes.length > 0) upstream.write(firstBytes);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  });
  upstream.on('error', (err) => {
    if (connected) client.destroy();
    else refuse(client, '502 Bad Gateway', `cannot reach ${bare}:${port}: ${err.message}`);
  });
  client.on('close', () => upstream.destroy());
}

/** The loopback port the bridge listens on inside the sandbox. */
export const BRIDGE_PORT = 3128;

/**
 * Runs inside the sandbox under the Node.js that runs Hearth: `node -e BRIDGE_SCRIPT SOCKET PORT
 * READY`. Pipes each loopback connection to the proxy's socket; touches READY once listening.
 */
export const BRIDGE_SCRIPT = `
const net = require('node:net');
const fs = require('node:fs');
const [socket, port, ready] = process.argv.slice(1);
net.createServer((c) => {
  const u = net.connect(socket);
  c.pipe(u); u.pipe(c);
  c.on('error', () => u.destroy()); u.on('error', () => c.destroy());
}).listen(Number(port), '127.0.0.1', () => fs.writeFileSync(ready, ''));
`;
