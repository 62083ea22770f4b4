import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local site for web_fetch tests: routes by path, counting the requests it got. */
export interface LocalSite {
  url(path: string): string;
  hits: string[];
  close(): Promise<void>;
}

export type Route = (req: IncomingMessage, res: ServerResponse) => void;

export async function startSite(routes: Record<string, Route>, host = '127.0.0.1'): Promise<LocalSite> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const route = routes[(req.url ?? '/').split('?')[0]!];
    if (route) route(req, res);
    else {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><body><h1>Not found</h1><p>No such page here.</p></body></html>');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://${host}:${port}${path}`,
    hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const html =
  (body: string, status = 200, headers: Record<string, string> = {}): Route =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
    res.end(body);
  };

export const redirect =
  (location: string, status = 302): Route =>
  (_req, res) => {
    res.writeHead(status, { location });
    res.end();
  };

const paragraph = (n: number) =>
  `<p>Paragraph ${n} of the field report. Ember kilns fired at dawn keep an even heat through the day, and the potters ` +
  `log each firing's temperature curve by hand so the next batch can be tuned before the clay is even wedged.</p>`;

/** An article page with the clutter real pages have around it: navigation, a sidebar, a footer. */
export function articlePage(paragraphs = 8): string {
  return `<!doctype html><html><head><title>Kiln Notes | The Potter's Weekly</title></head><body>
<nav><a href="/">Home</a> <a href="/shop">Shop</a> <a href="/login">Log in</a></nav>
<aside class="sidebar"><h3>Subscribe to our newsletter</h3><p>Deals every week.</p></aside>
<main><article>
<h1>How we keep a wood kiln at temperature</h1>
<p class="byline">By A. Potter</p>
${Array.from({ length: paragraphs }, (_, i) => paragraph(i + 1)).join('\n')}
<h2>Tools we use</h2>
<ul><li>A pyrometer</li><li>Cones 6 to 10</li></ul>
<p>See <a href="/guides/cones">our guide to cones</a> for more.</p>
</article></main>
<footer>© The Potter's Weekly · <a href="/privacy">Privacy</a></footer>
</body></html>`;
}

/** A page whose text is written by a script after load: next to nothing without JavaScript. */
export const SCRIPTED_PAGE = `<!doctype html><html><head><title>App</title></head><body>
<div id="root">Loading…</div>
<script src="/app.js"></script>
</body></html>`;

export const SCRIPTED_PAGE_JS = `
const root = document.getElementById('root');
root.innerHTML = '<article><h1>Rendered by script</h1>' +
  Array.from({ length: 6 }, (_, i) => '<p>Line ' + (i + 1) + ': the glaze recipe calls for feldspar, silica, whiting and kaolin, weighed dry and sieved twice through an eighty mesh screen.</p>').join('') +
  '</article>';
`;
