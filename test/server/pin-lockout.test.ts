import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Guard } from '../../src/server/guard.js';
import {
  FIRST_GLOBAL_LOCK_MS,
  FIRST_LOCK_MS,
  FREE_PIN_TRIES,
  GLOBAL_PIN_CEILING,
} from '../../src/server/pin-lockout.js';
import { startGateway, type TestGateway, TOKEN } from '../support/gateway.js';

const PIN = '482913';
const WRONG = '000000';

function guardAt() {
  const clock = { t: Date.UTC(2026, 0, 1) };
  const guard = new Guard({ token: TOKEN, pin: PIN, origins: [], hosts: [], now: () => clock.t });
  return { guard, clock };
}

describe('PIN lock-out', () => {
  it('locks one address for a growing time; others, and the token, still log in', () => {
    const { guard, clock } = guardAt();
    for (let i = 0; i < FREE_PIN_TRIES; i++)
      expect(guard.login({ pin: WRONG }, '10.0.0.9')).toMatchObject({ status: 401 });
    const locked = guard.login({ pin: PIN }, '10.0.0.9');
    expect(locked).toMatchObject({ ok: false, status: 429, retryAfterSeconds: FIRST_LOCK_MS / 1000 });
    expect(guard.login({ pin: PIN }, '10.0.0.1')).toMatchObject({ ok: true });
    expect(guard.login({ token: TOKEN }, '10.0.0.9')).toMatchObject({ ok: true });

    clock.t += FIRST_LOCK_MS;
    expect(guard.login({ pin: WRONG }, '10.0.0.9')).toMatchObject({ status: 401 });
    // One more wrong PIN after the wait doubles it.
    expect(guard.login({ pin: PIN }, '10.0.0.9')).toMatchObject({
      status: 429,
      retryAfterSeconds: (2 * FIRST_LOCK_MS) / 1000,
    });
    clock.t += 2 * FIRST_LOCK_MS;
    expect(guard.login({ pin: PIN }, '10.0.0.9')).toMatchObject({ ok: true });
    // The right PIN starts its count again.
    for (let i = 0; i < FREE_PIN_TRIES - 1; i++) guard.login({ pin: WRONG }, '10.0.0.9');
    expect(guard.login({ pin: PIN }, '10.0.0.9')).toMatchObject({ ok: true });
  });

  it('pauses PIN login for everyone past the global ceiling, for a time, never until a restart', () => {
    const { guard, clock } = guardAt();
    for (let i = 0; i < GLOBAL_PIN_CEILING; i++) guard.login({ pin: WRONG }, `10.0.${i >> 8}.${i & 255}`);
    expect(guard.login({ pin: PIN }, '192.168.1.2')).toMatchObject({
      status: 429,
      retryAfterSeconds: FIRST_GLOBAL_LOCK_MS / 1000,
    });
    expect(guard.login({ token: TOKEN }, '192.168.1.2')).toMatchObject({ ok: true });
    clock.t += FIRST_GLOBAL_LOCK_MS;
    expect(guard.login({ pin: PIN }, '192.168.1.2')).toMatchObject({ ok: true });
  });
});

describe('PIN lock-out over a real gateway', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  const login = (port: number, from: string, body: object) =>
    new Promise<{ status: number; retryAfter?: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          localAddress: from,
          port,
          method: 'POST',
          path: '/api/auth/login',
          headers: { host: `127.0.0.1:${port}`, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              retryAfter: res.headers['retry-after'] as string | undefined,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });

  it('a client that guesses wrong waits; the owner at another address logs in with the PIN', async () => {
    gw = await startGateway([], { host: '0.0.0.0', gateway: { pin: PIN } });
    for (let i = 0; i < FREE_PIN_TRIES + 3; i++) await login(gw.port, '127.0.0.2', { pin: WRONG });
    const attacker = await login(gw.port, '127.0.0.2', { pin: PIN });
    expect(attacker.status).toBe(429);
    expect(Number(attacker.retryAfter)).toBeGreaterThan(0);
    expect((await login(gw.port, '127.0.0.1', { pin: PIN })).status).toBe(200);
    expect((await login(gw.port, '127.0.0.2', { token: TOKEN })).status).toBe(200);
  });
});
