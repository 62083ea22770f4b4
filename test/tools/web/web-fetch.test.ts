import { gzipSync } from 'node:zlib';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ToolContext, ToolOutput } from '../../../src/tools/types.js';
import type { WebAccess } from '../../../src/tools/web/access.js';
import { webFetchTool } from '../../../src/tools/web/web-fetch.js';
import { makeToolContext } from '../../support/tool-context.js';
import { articlePage, html, type LocalSite, redirect, SCRIPTED_PAGE, startSite } from './pages.js';

/** The test site listens on 127.0.0.1, which only this allowlist entry opens; 127.0.0.2 stays closed. */
const ACCESS: WebAccess = {
  policy: { allow: ['127.0.0.1'] },
  maxBytes: 1024 * 1024,
  timeoutMs: 10_000,
  browser: false,
};

let site: LocalSite;
let other: LocalSite;
const sites: LocalSite[] = [];

beforeAll(async () => {
  other = await startSite({ '/secret': html('<p>internal admin page</p>') }, '127.0.0.2');
  site = await startSite({
    '/article': html(articlePage()),
    '/long': html(articlePage(120)),
    '/old': redirect('/article', 301),
    '/out': redirect(other.url('/secret')),
    '/app': html(SCRIPTED_PAGE),
    '/gone': html('<html><body><h1>Gone</h1><p>This page was removed.</p></body></html>', 404),
    '/data.json': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"kiln": "wood", "cone": 10}');
    },
    '/zipped': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(gzipSync(articlePage()));
    },
    '/big': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('x'.repeat(200_000));
    },
    '/image.png': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]));
    },
  });
  sites.push(site, other);
  return async () => {
    for (const s of sites) await s.close();
  };
});

afterEach(() => {
  other.hits.length = 0;
});

async function fetchPage(args: Record<string, unknown>, ctx?: ToolContext): Promise<ToolOutput> {
  const context = ctx ?? makeToolContext('/nonexistent', { web: ACCESS });
  const out = await webFetchTool.run(webFetchTool.parameters.parse(args), context);
  return typeof out === 'string' ? { output: out } : out;
}

describe('web_fetch, tier 1', () => {
  it('extracts the article of a static page as Markdown, without the navigation around it', async () => {
    const r = await fetchPage({ url: site.url('/article') });
    expect(r.output).toMatch(
      /^# Kiln Notes \| The Potter's Weekly\nURL: http:\/\/127\.0\.0\.1:\d+\/article\n/,
    );
    expect(r.output).toContain('## How we keep a wood kiln at temperature');
    expect(r.output).toContain('Paragraph 8 of the field report.');
    expect(r.output).toContain('## Tools we use');
    expect(r.output).toMatch(/- A pyrometer/);
    // Relative links come back absolute, so the model can fetch them.
    expect(r.output).toContain(`[our guide to cones](${site.url('/guides/cones')})`);
    expect(r.output).not.toContain('Subscribe to our newsletter');
    expect(r.output).not.toContain('Log in');
  });

  it('follows a redirect on the same site and decodes a compressed reply', async () => {
    expect((await fetchPage({ url: site.url('/old') })).output).toContain(`URL: ${site.url('/article')}`);
    expect((await fetchPage({ url: site.url('/zipped') })).output).toContain(
      'Paragraph 3 of the field report.',
    );
  });

  it('pages a long article and serves later pages from the session cache', async () => {
    const ctx = makeToolContext('/nonexistent', { web: ACCESS });
    const first = await fetchPage({ url: site.url('/long') }, ctx);
    const pages = Number(/\[page 1 of (\d+); call web_fetch with page: 2 for more\]/.exec(first.output)?.[1]);
    expect(pages).toBeGreaterThan(1);
    const hitsBefore = site.hits.length;
    const last = await fetchPage({ url: site.url('/long'), page: pages }, ctx);
    expect(last.output).toContain(`[page ${pages} of ${pages}]`);
    expect(last.output).toContain('Paragraph 120 of the field report.');
    expect(site.hits.length).toBe(hitsBefore);
    await expect(fetchPage({ url: site.url('/long'), page: pages + 1 }, ctx)).rejects.toThrow(
      `has ${pages} pages; page ${pages + 1} does not exist`,
    );
  });

  it('returns JSON and text as they are, and refuses to show binary content', async () => {
    expect((await fetchPage({ url: site.url('/data.json') })).output).toContain(
      '{"kiln": "wood", "cone": 10}',
    );
    const image = await fetchPage({ url: site.url('/image.png') });
    expect(image.ok).toBe(false);
    expect(image.output).toMatch(/is image\/png \(12 B\), not a page of text/);
  });

  it('stops reading at the size cap and says so', async () => {
    const ctx = makeToolContext('/nonexistent', { web: { ...ACCESS, maxBytes: 1000 } });
    const r = await fetchPage({ url: site.url('/big') }, ctx);
    expect(r.output).toContain('[only the first 1000 B were read]');
    expect(r.output).not.toContain('x'.repeat(1001));
  });

  it('reports an HTTP error with what the page said', async () => {
    await expect(fetchPage({ url: site.url('/gone') })).rejects.toThrow(
      /HTTP 404 from .*\/gone\.\n[\s\S]*This page was removed/,
    );
  });

  it('says when a page is built by JavaScript and rendering is off', async () => {
    const r = await fetchPage({ url: site.url('/app') });
    expect(r.output).toContain(
      '[the page has almost no text without JavaScript; rendering in a browser is switched off (web.browser: false)]',
    );
  });
});

describe('web_fetch refuses what it must not reach', () => {
  it.each([
    ['file:///etc/passwd', 'Only http and https URLs can be fetched, not file.'],
    ['ftp://example.com/x', 'Only http and https URLs can be fetched, not ftp.'],
    ['http://user:pw@example.com/', 'URLs with a user name or password are not fetched.'],
    ['example.com/page', 'is not a URL'],
  ])('%s', async (url, message) => {
    await expect(fetchPage({ url })).rejects.toThrow(message);
  });

  it('refuses loopback, private, link-local and mapped addresses given as literals', async () => {
    const ctx = makeToolContext('/nonexistent'); // the defaults: nothing private allowed
    for (const [url, kind] of [
      [site.url('/article'), 'loopback'],
      ['http://[::1]:9/', 'loopback'],
      ['http://[::ffff:127.0.0.1]:9/', 'loopback'],
      ['http://2130706433:9/', 'loopback'], // 127.0.0.1 written as one number
      ['http://10.1.2.3/', 'private'],
      ['http://192.168.1.1/admin', 'private'],
      ['http://169.254.169.254/latest/meta-data/', 'link-local (cloud metadata)'],
      ['http://100.100.100.200/', 'carrier-grade NAT'],
      ['http://[fd00:ec2::254]/', 'private'],
      ['http://0.0.0.0:9/', 'unspecified'],
    ] as const) {
      await expect(fetchPage({ url }, ctx), url).rejects.toThrow(`is a ${kind} address`);
    }
  });

  it('refuses a name that resolves to a private address, or to one among public ones', async () => {
    const answers: Record<string, string[]> = {
      'metadata.test': ['169.254.169.254'],
      'mixed.test': ['93.184.215.14', '10.0.0.7'],
    };
    const web: WebAccess = { ...ACCESS, policy: { allow: [], lookup: async (host) => answers[host] ?? [] } };
    const ctx = makeToolContext('/nonexistent', { web });
    await expect(fetchPage({ url: 'http://metadata.test/latest/' }, ctx)).rejects.toThrow(
      'metadata.test (169.254.169.254) is a link-local (cloud metadata) address',
    );
    await expect(fetchPage({ url: 'http://mixed.test/' }, ctx)).rejects.toThrow(
      'mixed.test (10.0.0.7) is a private address',
    );
    // The real resolver too: localhost is loopback, whatever port the site is on.
    const port = new URL(other.url('/')).port;
    await expect(
      fetchPage({ url: `http://localhost:${port}/secret` }, makeToolContext('/x')),
    ).rejects.toThrow(/localhost \((127\.0\.0\.1|::1)\) is a loopback address/);
    expect(other.hits).toEqual([]);
  });

  it('does not follow a redirect into a private address', async () => {
    const r = await fetchPage({ url: site.url('/out') });
    expect(r.output).toContain(`redirected (HTTP 302) to another site: ${other.url('/secret')}`);
    await expect(fetchPage({ url: other.url('/secret') })).rejects.toThrow('127.0.0.2 is a loopback address');
    expect(other.hits).toEqual([]);
  });

  it('opens a private range only to the allowlist entry that names it', async () => {
    const ctx = makeToolContext('/x', { web: { ...ACCESS, policy: { allow: ['127.0.0.0/30'] } } });
    expect((await fetchPage({ url: other.url('/secret') }, ctx)).output).toContain('internal admin page');
    expect(other.hits).toEqual(['/secret']);
  });
});
