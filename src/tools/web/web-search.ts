import { z } from 'zod';
import { BlockedAddressError } from '../../sandbox/address-policy.js';
import { defineTool, ToolError, type ToolOutput } from '../types.js';
import { DEFAULT_WEB_ACCESS } from './access.js';
import { FetchError, httpGet } from './http-get.js';

/**
 * web_search: a query to the SearXNG instance the user configured (`web.search.searxng_url`, a
 * security setting), through its JSON API (docs.searxng.org/dev/search_api: `GET /search?q=…&format=json`;
 * the instance must list `json` under `search.formats`, or it answers 403). The tool is offered only
 * when an instance is set (catalog.ts). Requests go through web_fetch's guarded client: the
 * instance's own host is allowed even when private (the user named it; self-hosted instances
 * usually are), every other private address stays closed, redirects included.
 *
 * The result is a compact list, a few tokens per hit: title, address, one line of snippet.
 */

/** Hits returned; SearXNG gives about twenty a page, more than a small context wants. */
const MAX_RESULTS = 8;
const SNIPPET_CHARS = 200;

interface SearxngResult {
  title?: unknown;
  url?: unknown;
  content?: unknown;
}

export const webSearchTool = defineTool({
  name: 'web_search',
  description: 'Search the web; returns titles, URLs and snippets (read a page with web_fetch).',
  parameters: z.object({ query: z.string().min(1) }),
  // The query leaves the machine (to the instance and the engines it asks), so it asks like a change.
  mutates: true,
  touches: (args) => ({ text: args.query }),
  label: (args) => `web_search ${JSON.stringify(args.query)}`,
  async run(args, ctx) {
    const access = ctx.web ?? DEFAULT_WEB_ACCESS;
    if (!access.searxng) throw new ToolError('No search backend is configured (web.search.searxng_url).');
    const url = searchUrl(access.searxng, args.query);
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(access.timeoutMs)]);
    let body: unknown;
    try {
      const reply = await httpGet(url.href, {
        policy: { ...access.policy, allow: [...access.policy.allow, url.hostname] },
        maxBytes: access.maxBytes,
        signal,
        headers: { accept: 'application/json' },
      });
      if ('redirect' in reply)
        throw new FetchError(`The search instance redirected to another site (${reply.redirect}).`);
      if (reply.status === 403)
        throw new FetchError(
          `The search instance refused the JSON format (HTTP 403): add json to search.formats in its settings.yml.`,
        );
      if (reply.status >= 400) throw new FetchError(`The search instance answered HTTP ${reply.status}.`);
      body = JSON.parse(reply.body.toString('utf8'));
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      if (err instanceof FetchError || err instanceof BlockedAddressError) throw new ToolError(err.message);
      if (err instanceof SyntaxError) throw new ToolError('The search instance did not answer with JSON.');
      const e = err as Error;
      if (e.name === 'TimeoutError')
        throw new ToolError(
          `The search instance did not answer within ${Math.round(access.timeoutMs / 1000)}s.`,
        );
      throw new ToolError(`The search failed: ${e.message}`);
    }
    return formatResults(args.query, body);
  },
});

function searchUrl(instance: string, query: string): URL {
  const url = new URL(instance);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/search`;
  url.searchParams.set('q', query);
  url.searchParams.set('format', 'json');
  return url;
}

function formatResults(query: string, body: unknown): ToolOutput {
  const results = (body as { results?: unknown })?.results;
  const hits = (Array.isArray(results) ? (results as SearxngResult[]) : [])
    .filter((r) => typeof r.url === 'string' && /^https?:\/\//.test(r.url))
    .slice(0, MAX_RESULTS);
  if (hits.length === 0) return { output: `No results for ${JSON.stringify(query)}.`, meta: { results: 0 } };
  const lines = hits.map((hit, i) => {
    const title = oneLine(hit.title) || (hit.url as string);
    const snippet = oneLine(hit.content);
    const cut = snippet.length > SNIPPET_CHARS ? `${snippet.slice(0, SNIPPET_CHARS - 1)}…` : snippet;
    return `${i + 1}. ${title}\n   ${hit.url}${cut ? `\n   ${cut}` : ''}`;
  });
  return { output: lines.join('\n'), meta: { results: hits.length } };
}

function oneLine(value: unknown): string {
  return typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : '';
}
