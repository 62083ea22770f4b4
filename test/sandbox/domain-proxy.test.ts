import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBwrapSandbox } from '../../src/sandbox/bwrap.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { bwrapUnavailable } from './support.js';

const unavailable = await bwrapUnavailable();
let ws: string;
let sandbox: Sandbox;
let allowed: Server;
let other: Server;
const hits: string[] = [];

async function listen(host: string, body: string): Promise<Server> {
  const server = createServer((req, res) => {
    hits.push(`${host}${req.url}`);
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return server;
}
const port = (s: Server) => (s.address() as AddressInfo).port;

beforeAll(async () => {
  if (unavailable) return;
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-proxy-')));
  allowed = await listen('127.0.0.1', 'hello from the allowed host');
  other = await listen('127.0.0.2', 'should not be reached');
  sandbox = await createBwrapSandbox({
    workspace: ws,
    network: false,
    envAllow: [],
    // The test servers are on loopback, which the proxy refuses unless allowed, like web_fetch.
    allowDomains: ['127.0.0.1', 'localhost'],
    privateAllow: ['127.0.0.1'],
  });
});

afterAll(async () => {
  if (unavailable) return;
  await sandbox.dispose();
  allowed.close();
  other.close();
  await rm(ws, { recursive: true, force: true });
});

const run = (command: string) => sandbox.exec({ command, cwd: ws, timeoutMs: 30_000 });

describe.skipIf(unavailable !== null)(
  `sandbox.network as a list of domains${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    it('reaches a listed host through the proxy', async () => {
      const r = await run(`curl -sS http://127.0.0.1:${port(allowed)}/ok`);
      expect(r.output).toBe('hello from the allowed host');
      expect(hits).toContain('127.0.0.1/ok');
    });

    it('refuses a host that is not listed, over CONNECT too', async () => {
      const r = await run(`curl -sS http://127.0.0.2:${port(other)}/no`);
      expect(r.output).toContain('hearth: 127.0.0.2 is not in sandbox.network');
      const tunnel = await run(`curl -sS -p http://127.0.0.2:${port(other)}/no`);
      expect(tunnel.exitCode).not.toBe(0);
      expect(tunnel.output).toMatch(/403/);
      expect(hits.filter((h) => h.startsWith('127.0.0.2'))).toEqual([]);
    });

    it('refuses a listed name that resolves to an address no entry opens', async () => {
      const closed = await createBwrapSandbox({
        workspace: ws,
        network: false,
        envAllow: [],
        allowDomains: ['localhost'],
      });
      try {
        const r = await closed.exec({
          command: `curl -sS http://localhost:${port(allowed)}/no`,
          cwd: ws,
          timeoutMs: 30_000,
        });
        expect(r.output).toMatch(
          /hearth: cannot reach localhost:\d+: localhost \((127\.0\.0\.1|::1)\) is a loopback address/,
        );
        expect(hits).not.toContain('127.0.0.1/no');
      } finally {
        await closed.dispose();
      }
    });

    it('gives a program that ignores the proxy no network at all', async () => {
      const r = await run(`curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:${port(allowed)}/direct`);
      expect(r.exitCode).not.toBe(0);
      expect(hits).not.toContain('127.0.0.1/direct');
    });
  },
);
