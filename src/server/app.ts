import { OpenAPIHono } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import { getCookie } from 'hono/cookie';
import { cors } from 'hono/cors';
import { SESSION_COOKIE } from './guard.js';
import { describeError, problem } from './problem.js';
import { gatewayRoutes } from './routes/index.js';
import type { GatewayApp, GatewayEnv, RouteDeps } from './types.js';
import { isWebPath, webRoutes } from './web.js';

export interface AppOptions extends RouteDeps {
  /** Browser origins allowed besides the gateway's own page (CORS). */
  origins: readonly string[];
  /** Where local clients find the token, named in the 401 message. */
  tokenFile: string;
  /** The built web UI (index.html and assets/). */
  webRoot: string;
}

/** A message can hold a pasted file or diff; anything past this is refused, not buffered. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Paths anyone may call once Host and Origin pass: the web pages, and the login that gives a cookie. */
function isPublic(method: string, path: string): boolean {
  return isWebPath(method, path) || (method === 'POST' && path === '/api/auth/login');
}

/**
 * The gateway's HTTP application: checks in front of every route (Host, Origin, CORS when
 * configured, authentication, body size), the routes, and the OpenAPI document generated from them.
 */
export function buildApp(options: AppOptions): GatewayApp {
  const { guard, log } = options;
  const app = new OpenAPIHono<GatewayEnv>({
    defaultHook: (result, c) => {
      if (result.success) return;
      const problems = result.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`);
      return problem(c, 400, `Invalid request: ${problems.join('; ')}`);
    },
  });

  app.onError((err, c) => {
    const { status, detail, extra } = describeError(err);
    if (status === 500) log(`${c.req.method} ${c.req.path} failed: ${(err as Error).stack ?? detail}`);
    return problem(c, status, detail, extra);
  });
  app.notFound((c) =>
    problem(c, 404, `No route for ${c.req.method} ${c.req.path}; the API is described at /doc.`),
  );

  app.use('*', async (c, next) => {
    const host = c.req.header('host');
    if (!guard.hostAllowed(host)) {
      return problem(
        c,
        403,
        'This gateway does not answer to that host name. Use its address, or add the name to gateway.hosts.',
      );
    }
    if (!guard.originAllowed(c.req.header('origin'), host)) {
      return problem(
        c,
        403,
        'Requests from other web pages are refused. Allow an origin with gateway.origins (in ~/.hearth/config.json).',
      );
    }
    await next();
  });
  if (options.origins.length > 0) {
    app.use('*', cors({ origin: [...options.origins], credentials: true, maxAge: 600 }));
  }
  app.use('*', async (c, next) => {
    if (isPublic(c.req.method, c.req.path)) return next();
    if (!guard.authenticated(c.req.header('authorization'), getCookie(c, SESSION_COOKIE))) {
      c.header('WWW-Authenticate', 'Bearer realm="hearth"');
      return problem(
        c,
        401,
        `Authentication required: send "Authorization: Bearer <token>" (local clients find the token in ${options.tokenFile}), or log in with the PIN at POST /api/auth/login.`,
      );
    }
    await next();
  });
  app.use(
    '/api/*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => problem(c, 413, `The request body is over ${MAX_BODY_BYTES / 1024 / 1024} MB.`),
    }),
  );

  webRoutes(app, options.webRoot);
  for (const route of gatewayRoutes) route.register(app, options);

  app.openAPIRegistry.registerComponent('securitySchemes', 'token', { type: 'http', scheme: 'bearer' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'cookie', {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
  });
  app.doc31('/doc', {
    openapi: '3.1.0',
    info: {
      title: 'Hearth gateway',
      version: options.version,
      description:
        'Runs Hearth sessions over HTTP, WebSocket and SSE. Every operation needs the bearer token or ' +
        'the session cookie (POST /api/auth/login), and a Host and Origin of the gateway itself.',
    },
    security: [{ token: [] }, { cookie: [] }],
  });
  return app;
}
