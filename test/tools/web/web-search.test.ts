import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolOutput } from '../../../src/tools/types.js';
import type { WebAccess } from '../../../src/tools/web/access.js';
import { webSearchTool } from '../../../src/tools/web/web-search.js';
import { makeToolContext } from '../../support/tool-context.js';
import { html, type LocalSite, type Route, redirect, startSite } from './pages.js';

/**
 * A local SearXNG instance. The reply has the shape of SearXNG's JSON format as its Search API
 * documents it (https://docs.searxng.org/dev/search_api: `GET /search?q=…&format=json`; a format
 * the instance has not enabled answers 403 Forbidden): `query`, `number_of_results`, `results` with
 * `url`, `title`, `content`, `engine`, `engines`, `score`, `category`, and `answers`,
 * `suggestions`, `infoboxes`, `unresponsive_engines`.
 */
function searxng(results: number): Route {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.searchParams.get('format') !== 'json') {
      res.writeHead(403, { 'content-type': 'text/html' });
      res.end('<h1>403 Forbidden</h1>');
      return;
    }
    const q = url.searchParams.get('q') ?? '';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        query: q,
        number_of_results: 0,
        results: Array.from({ length: results }, (_, i) => ({
          url: `https://example.org/kilns/${i + 1}`,
          title: `Kiln guide ${i + 1}\n for "${q}"`,
          content:
            i === 0 ? `Wood kilns   reach cone 10. ${'Long detail. '.repeat(40)}` : `Snippet ${i + 1}.`,
          engine: 'duckduckgo',
          engines: ['duckduckgo', 'brave'],
          parsed_url: ['https', 'example.org', `/kilns/${i + 1}`, '', '', ''],
          template: 'default.html',
          positions: [i + 1],
          score: 1 / (i + 1),
          category: 'general',
        })),
        answers: [],
        corrections: [],
        infoboxes: [],
        suggestions: ['wood kiln cone'],
        unresponsive_engines: [],
      }),
    );
  };
}

let instance: LocalSite;
let other: LocalSite;
const queries: string[] = [];

beforeAll(async () => {
  other = await startSite({ '/search': searxng(3) }, '127.0.0.2');
  instance = await startSite({
    '/search': (req, res) => {
      queries.push(req.url ?? '');
      searxng(12)(req, res);
    },
    '/none/search': searxng(0),
    '/closed/search': html('<h1>403 Forbidden</h1>', 403),
    '/away/search': redirect(other.url('/search')),
  });
});
afterAll(async () => {
  await instance.close();
  await other.close();
});

/**
 * The instance listens on loopback, which the address policy closes by default; the configured
 * instance's own host is opened for web_search alone, so no allowlist entry is given here.
 */
function access(path = ''): WebAccess {
  return { policy: { allow: [] }, maxBytes: 1 << 20, timeoutMs: 10_000, searxng: instance.url(path) };
}

async function search(query: string, web?: WebAccess): Promise<ToolOutput> {
  const out = await webSearchTool.run({ query }, makeToolContext('/nonexistent', web ? { web } : {}));
  return typeof out === 'string' ? { output: out } : out;
}

describe('web_search over a SearXNG instance', () => {
  it("asks the instance's JSON API and returns a compact list: title, URL, one line of snippet", async () => {
    const r = await search('wood kiln temperature', access());
    const asked = new URL(queries.at(-1)!, 'http://localhost');
    expect(asked.pathname).toBe('/search');
    expect(asked.searchParams.get('q')).toBe('wood kiln temperature');
    expect(asked.searchParams.get('format')).toBe('json');
    const lines = r.output.split('\n');
    expect(lines.slice(0, 3)).toEqual([
      '1. Kiln guide 1 for "wood kiln temperature"',
      '   https://example.org/kilns/1',
      expect.stringMatching(/^ {3}Wood kilns reach cone 10\. (Long detail\. )+.*…$/),
    ]);
    expect(lines[2]!.length).toBeLessThanOrEqual(203);
    // Eight hits at most, each in three short lines.
    expect(r.output).toContain('8. Kiln guide 8');
    expect(r.output).not.toContain('9. Kiln guide 9');
    expect(r.meta).toEqual({ results: 8 });
    expect(r.output.length).toBeLessThan(1200);
  });

  it('says when nothing was found', async () => {
    expect((await search('nothing', access('/none'))).output).toBe('No results for "nothing".');
  });

  it('explains an instance that has the JSON format switched off', async () => {
    await expect(search('kiln', access('/closed'))).rejects.toThrow(
      'The search instance refused the JSON format (HTTP 403): add json to search.formats in its settings.yml.',
    );
  });

  it("opens only the instance's own host: a redirect elsewhere is refused and never followed", async () => {
    await expect(search('kiln', access('/away'))).rejects.toThrow(/redirected to another site/);
    const elsewhere: WebAccess = { ...access(), searxng: other.url('') };
    // 127.0.0.2 is another host: named as the instance it is allowed, and only then.
    expect((await search('kiln', elsewhere)).output).toContain('1. Kiln guide 1');
  });

  it('is refused without a configured instance', async () => {
    await expect(search('kiln')).rejects.toThrow('No search backend is configured (web.search.searxng_url).');
  });
});
