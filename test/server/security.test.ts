import { readFile, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { createServer, GatewayConfigError } from '../../src/server/index.js';
import { FREE_PIN_TRIES } from '../../src/server/pin-lockout.js';
import { openSocket, startGateway, type TestGateway, TOKEN } from '../support/gateway.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request with exactly these headers (fetch will not send a Host of our choosing). */
function raw(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, setHost: false }, (res) => {
      let text = '';
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Operation {
  method: string;
  path: string;
}

async function operations(gateway: TestGateway): Promise<Operation[]> {
  const doc = await gateway.json<{ openapi: string; paths: Record<string, Record<string, unknown>> }>('/doc');
  expect(doc.openapi).toBe('3.1.0');
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => ({
      method: method.toUpperCase(),
      path: path.replace('{id}', 'sec1').replace('{session}', 'sec1').replace('{callId}', 'call_1'),
    })),
  );
}

/** The four ways in that must all be refused, with the status each gets. */
function attempts(port: number): Array<{ name: string; status: number; headers: Record<string, string> }> {
  const host = `127.0.0.1:${port}`;
  return [
    { name: 'no credentials', status: 401, headers: { host } },
    {
      name: 'a wrong token',
      status: 401,
      headers: { host, authorization: 'Bearer wrong-token-0123456789abcdef' },
    },
    {
      name: 'a foreign Origin',
      status: 403,
      headers: { host, authorization: `Bearer ${TOKEN}`, origin: 'http://evil.example' },
    },
    {
      name: 'a foreign Host (DNS rebinding)',
      status: 403,
      headers: { host: `evil.example:${port}`, authorization: `Bearer ${TOKEN}` },
    },
  ];
}

async function refusesEverything(gateway: TestGateway): Promise<void> {
  const ops = await operations(gateway);
  expect(ops.length).toBeGreaterThan(20);
  // Memory (#20), the scheduler and the inbox (#21) are in the document, so each is tried below.
  expect(ops.map((op) => `${op.method} ${op.path}`)).toEqual(
    expect.arrayContaining([
      'GET /api/memory',
      'POST /api/memory',
      'GET /api/memory/search',
      'DELETE /api/memory/sec1',
      'GET /api/memory/export',
      'GET /api/memory/proposals',
      'PATCH /api/memory/proposals/sec1',
      'POST /api/memory/proposals/sec1/accept',
      'POST /api/memory/proposals/sec1/reject',
      'GET /api/cron',
      'POST /api/cron/reload',
      'POST /api/cron/sec1/run',
      'POST /api/cron/sec1/toggle',
      'GET /api/cron/sec1/runs',
      'GET /api/inbox',
      'POST /api/inbox',
    ]),
  );
  const failures: string[] = [];
  for (const attempt of attempts(gateway.port)) {
    for (const op of ops) {
      const body =
        op.method === 'GET' || op.method === 'DELETE'
          ? undefined
          : '{"message":"x","decision":"once","mode":"bounded","model_id":"m","text":"x","task":"x"}';
      const headers = { ...attempt.headers, ...(body ? { 'content-type': 'application/json' } : {}) };
      const answer = await raw(gateway.port, op.method, op.path, headers, body);
      const expected =
        op.path === '/api/auth/login' && attempt.status === 401 ? [400, 401] : [attempt.status];
      if (!expected.includes(answer.status))
        failures.push(`${op.method} ${op.path} with ${attempt.name}: ${answer.status} ${answer.body}`);
      else expect(answer.headers['content-type']).toBe('application/problem+json');
      if (op.path.startsWith('/ws/')) {
        const upgrade = await openSocket(`ws://127.0.0.1:${gateway.port}${op.path}`, attempt.headers).then(
          () => 'opened',
          (err: { status?: number }) => err.status,
        );
        if (upgrade !== attempt.status)
          failures.push(`WebSocket ${op.path} with ${attempt.name}: ${upgrade}`);
      }
    }
    for (const page of ['/', '/doc']) {
      if (attempt.status === 401 && page === '/') continue; // the page is public, its data is not
      const answer = await raw(gateway.port, 'GET', page, attempt.headers);
      if (answer.status !== attempt.status)
        failures.push(`GET ${page} with ${attempt.name}: ${answer.status}`);
    }
  }
  expect(failures).toEqual([]);
  // Nothing got through: no session was made, no model was asked.
  expect(gateway.llm.requests).toHaveLength(0);
  expect((await gateway.json<{ sessions: unknown[] }>('/api/sessions')).sessions).toEqual([]);
  expect((await gateway.json<{ memories: unknown[] }>('/api/memory?scope=all')).memories).toEqual([]);
  expect((await gateway.json<{ waiting: unknown[] }>('/api/inbox')).waiting).toEqual([]);
}

describe('every operation in /doc refuses strangers', () => {
  it('on a non-loopback configuration (any address, with a PIN)', async () => {
    gw = await startGateway([], { host: '0.0.0.0', config: { gateway: { pin: true } } });
    await refusesEverything(gw);
  });

  it('on loopback too (Host and Origin are checked there as well)', async () => {
    gw = await startGateway([]);
    await refusesEverything(gw);
  });
});

describe('starting', () => {
  it('refuses to listen beyond loopback without a chosen token or PIN, and says how', async () => {
    const config = configSchema.parse({ db_path: ':memory:' });
    const server = createServer({ config, workspace: process.cwd(), stateFile: false });
    const error = await new Promise<Error>((resolve) => {
      server.once('error', resolve);
      server.listen(0, '0.0.0.0');
    });
    expect(error).toBeInstanceOf(GatewayConfigError);
    expect(error.message).toContain('--pin');
    expect(error.message).toContain('--token');
    expect(server.listening).toBe(false);
    await server.shutdown();
  });

  it('on loopback makes up a token and writes it, with the URL, to a file only the user can read', async () => {
    gw = await startGateway([], { config: { gateway: { token: undefined } } });
    const file = join(gw.dir, 'gateway.json');
    await expect
      .poll(() =>
        stat(file).then(
          () => true,
          () => false,
        ),
      )
      .toBe(true);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const written = JSON.parse(await readFile(file, 'utf8')) as { url: string; token: string; pid: number };
    expect(written).toMatchObject({ url: gw.url, pid: process.pid });
    expect(written.token).not.toBe(TOKEN);
    expect(written.token.length).toBeGreaterThanOrEqual(40);
    const ok = await gw.http('/api/health', { headers: { authorization: `Bearer ${written.token}` } });
    expect(ok.status).toBe(200);
    expect((await gw.http('/api/health')).status).toBe(401);
    await gw.close();
    gw = undefined;
    await expect(stat(file)).rejects.toThrow();
  });
});

describe('browsers', () => {
  it('trade the PIN for an HttpOnly cookie; wrong PINs make the client wait, the token still works', async () => {
    const pin = '482913';
    gw = await startGateway([], { host: '0.0.0.0', gateway: { pin } });
    const login = (body: object) =>
      fetch(`${gw!.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: gw!.url },
        body: JSON.stringify(body),
      });
    const ok = await login({ pin });
    expect(ok.status).toBe(200);
    const cookie = ok.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^hearth_session=[\w-]+; Path=\/; HttpOnly; SameSite=Strict$/);
    const session = cookie.split(';')[0]!;
    const status = await fetch(`${gw.url}/api/status`, { headers: { cookie: session, origin: gw.url } });
    expect(status.status).toBe(200);
    const ws = await openSocket(`ws://127.0.0.1:${gw.port}/ws/pin1`, { cookie: session, origin: gw.url });
    ws.ws.close();
    // The same cookie from another page's request is refused (CSRF).
    const csrf = await raw(
      gw.port,
      'POST',
      '/api/sessions',
      {
        host: `127.0.0.1:${gw.port}`,
        cookie: session,
        origin: 'http://evil.example',
        'content-type': 'application/json',
      },
      '{}',
    );
    expect(csrf.status).toBe(403);

    for (let i = 0; i < FREE_PIN_TRIES; i++) expect((await login({ pin: '000000' })).status).toBe(401);
    const locked = await login({ pin });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await locked.json()) as { detail: string }).detail).toMatch(/try again in \d+ s.*token/);
    expect((await login({ token: TOKEN })).status).toBe(200);
  });

  it('get CORS answers only from configured origins', async () => {
    gw = await startGateway([], { config: { gateway: { origins: ['https://ui.example'] } } });
    const preflight = await raw(gw.port, 'OPTIONS', '/api/status', {
      host: `127.0.0.1:${gw.port}`,
      origin: 'https://ui.example',
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://ui.example');
    const allowed = await raw(gw.port, 'GET', '/api/status', {
      host: `127.0.0.1:${gw.port}`,
      origin: 'https://ui.example',
      authorization: `Bearer ${TOKEN}`,
    });
    expect(allowed.status).toBe(200);
    expect(allowed.headers['access-control-allow-origin']).toBe('https://ui.example');
    const other = await raw(gw.port, 'OPTIONS', '/api/status', {
      host: `127.0.0.1:${gw.port}`,
      origin: 'https://other.example',
      'access-control-request-method': 'GET',
    });
    expect(other.status).toBe(403);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});
