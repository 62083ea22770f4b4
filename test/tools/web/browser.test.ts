import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolOutput } from '../../../src/tools/types.js';
import type { WebAccess } from '../../../src/tools/web/access.js';
import { findBrowser } from '../../../src/tools/web/browser.js';
import { webFetchTool } from '../../../src/tools/web/web-fetch.js';
import { makeToolContext } from '../../support/tool-context.js';
import { html, type LocalSite, SCRIPTED_PAGE, SCRIPTED_PAGE_JS, startSite } from './pages.js';

const browser = await findBrowser(process.env.HEARTH_CHROMIUM);
if (!browser) {
  console.warn(
    'web_fetch tier 2 tests skipped: no Chromium or Chrome on this machine (apt-get install chromium).',
  );
}

let site: LocalSite;
let other: LocalSite;

beforeAll(async () => {
  other = await startSite({ '/secret.js': (_q, res) => res.end('document.title = "leaked"') }, '127.0.0.2');
  site = await startSite({
    '/app': html(SCRIPTED_PAGE),
    '/app.js': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(SCRIPTED_PAGE_JS);
    },
    // A page that tries to reach a private address from inside the browser.
    '/probe': html(
      `<html><head><title>Probe</title><script src="${other.url('/secret.js')}"></script></head><body><div id="root"></div>
<script>fetch(${JSON.stringify(other.url('/secret.js'))}).catch(() => {});
document.getElementById('root').innerHTML = '<article><h1>Probe</h1>' + '<p>The probe page writes this text with a script so that the first tier sees nothing and the browser has to render it.</p>'.repeat(4) + '</article>';</script></body></html>`,
    ),
  });
});

afterAll(async () => {
  await site?.close();
  await other?.close();
});

const ACCESS: WebAccess = { policy: { allow: ['127.0.0.1'] }, maxBytes: 1024 * 1024, timeoutMs: 30_000 };

async function fetchPage(url: string): Promise<ToolOutput> {
  const ctx = makeToolContext('/nonexistent', { web: { ...ACCESS, browser } });
  const out = await webFetchTool.run({ url }, ctx);
  return typeof out === 'string' ? { output: out } : out;
}

describe.skipIf(!browser)('web_fetch, tier 2 (system Chromium)', () => {
  it('renders a page whose content is written by JavaScript', async () => {
    const r = await fetchPage(site.url('/app'));
    expect(r.output).toContain('Rendered by script');
    expect(r.output).toContain('Line 6: the glaze recipe calls for feldspar');
    expect(r.output).toMatch(/\[the page has almost no text without JavaScript; rendered in chrom\w*\]/);
  }, 60_000);

  it('answers every request of the page through the address checks', async () => {
    const r = await fetchPage(site.url('/probe'));
    expect(r.output).toContain('The probe page writes this text');
    expect(other.hits).toEqual([]);
  }, 60_000);
});
