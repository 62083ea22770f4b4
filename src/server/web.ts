import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageRoot } from '../util/package-root.js';
import type { GatewayApp } from './types.js';

/**
 * The browser UI: `index.html` at `/` (never cached, so a new build is picked up) and the
 * bundles it names under `/assets/` (content-hashed names, cached for a year). Pages are public:
 * they hold no data and must load to ask for the PIN; everything they fetch goes through the API's
 * checks. The files are built by `web/build.ts` into the package's `dist/web`.
 */
export function defaultWebRoot(): string {
  return join(packageRoot(import.meta.url), 'dist', 'web');
}

/** Built asset names only: no folders, no dot files. */
const ASSET = /^\/assets\/[\w-]+\.(js|css)$/;
const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

export function isWebPath(method: string, path: string): boolean {
  return method === 'GET' && (path === '/' || ASSET.test(path));
}

const MISSING = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hearth</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">
<h1>Hearth gateway</h1>
<p>The web interface is not built in this copy (run <code>npm run build</code>). The API is described at
<code>/doc</code> (OpenAPI 3.1); WebSocket clients connect to <code>/ws/&lt;session&gt;</code>.</p>
</body></html>
`;

/**
 * What the page may load: its own scripts and styles, images only inline (model output never
 * pulls a remote one), connections to this gateway only.
 */
const CONTENT_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
  "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export function webRoutes(app: GatewayApp, root: string): void {
  app.get('/', async (c) => {
    const page = await readFile(join(root, 'index.html'), 'utf8').catch(() => MISSING);
    c.header('Cache-Control', 'no-cache');
    c.header('Content-Security-Policy', CONTENT_POLICY);
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    return c.html(page);
  });
  app.get('/assets/:name', async (c) => {
    const match = ASSET.exec(c.req.path);
    const body = match ? await readFile(join(root, c.req.path)).catch(() => undefined) : undefined;
    if (!match || !body) return c.notFound();
    return c.body(body, 200, {
      'Content-Type': TYPES[match[1]!]!,
      'Cache-Control': 'public, max-age=31536000, immutable',
      'X-Content-Type-Options': 'nosniff',
    });
  });
}
