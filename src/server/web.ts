import type { GatewayApp } from './types.js';

/**
 * The browser UI's place in the gateway. It will be served at `/` from built assets (issue 16);
 * until then `/` says where the API is. Pages are public (they hold no data and must load to ask
 * for the PIN); everything they fetch goes through the API's checks.
 */
export function isWebPath(method: string, path: string): boolean {
  return method === 'GET' && path === '/';
}

const PLACEHOLDER = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hearth</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">
<h1>Hearth gateway</h1>
<p>The web interface is not built into this version yet. The API is described at <code>/doc</code>
(OpenAPI 3.1); WebSocket clients connect to <code>/ws/&lt;session&gt;</code>.</p>
</body></html>
`;

export function webRoutes(app: GatewayApp): void {
  app.get('/', (c) => c.html(PLACEHOLDER));
}
