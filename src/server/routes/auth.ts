import { createRoute, z } from '@hono/zod-openapi';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { SESSION_COOKIE } from '../guard.js';
import { GatewayError } from '../problem.js';
import { json, jsonBody, problemResponse, refusals } from '../schemas.js';
import { type GatewayRoute, route } from './route.js';

// Browsers cannot keep a header: they trade the PIN (or the token) for an HttpOnly cookie.

const login = route(
  createRoute({
    method: 'post',
    path: '/api/auth/login',
    tags: ['auth'],
    summary: 'Trade the PIN, the token or a one-time login code for a session cookie',
    description: `Sets the HttpOnly, SameSite=Strict cookie \`${SESSION_COOKIE}\`. Wrong PINs are counted per client address: after a few, that address waits a time that doubles with each further wrong PIN (and after many from all addresses, everyone does). The token always works.`,
    request: {
      body: jsonBody(
        z.object({
          pin: z.string().min(1).max(64).optional(),
          token: z.string().min(1).max(512).optional(),
          code: z
            .string()
            .min(1)
            .max(128)
            .optional()
            .openapi({ description: 'A one-time code from `hearth serve --open`.' }),
        }),
      ),
    },
    responses: {
      200: json(z.object({ ok: z.literal(true) }), 'Logged in; the cookie is set'),
      429: problemResponse('Too many wrong PINs'),
      ...refusals,
    },
  }),
  (c, { guard }) => {
    const result = guard.login(c.req.valid('json'), c.env.incoming.socket.remoteAddress ?? 'unknown');
    if (!result.ok) {
      if (result.retryAfterSeconds !== undefined) c.header('retry-after', String(result.retryAfterSeconds));
      throw new GatewayError(result.status, result.detail);
    }
    setCookie(c, SESSION_COOKIE, result.cookie, { httpOnly: true, sameSite: 'Strict', path: '/' });
    return c.json({ ok: true as const }, 200);
  },
);

const logout = route(
  createRoute({
    method: 'post',
    path: '/api/auth/logout',
    tags: ['auth'],
    summary: 'End this browser’s session',
    responses: { 200: json(z.object({ ok: z.literal(true) }), 'Logged out'), ...refusals },
  }),
  (c, { guard }) => {
    guard.logout(getCookie(c, SESSION_COOKIE));
    deleteCookie(c, SESSION_COOKIE, { path: '/' });
    return c.json({ ok: true as const }, 200);
  },
);

export const authRouteList: readonly GatewayRoute[] = [login, logout];
