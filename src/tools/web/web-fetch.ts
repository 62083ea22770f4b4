import { z } from 'zod';
import { BlockedAddressError } from '../../sandbox/address-policy.js';
import { formatBytes } from '../truncate.js';
import { defineTool, type ToolContext, ToolError, type ToolOutput } from '../types.js';
import { DEFAULT_WEB_ACCESS, type WebAccess } from './access.js';
import { type BrowserPage, renderPage } from './browser.js';
import { htmlToMarkdown, looksLikeChallenge } from './extract.js';
import { FetchError, type HttpReply, httpGet, parseHttpUrl } from './http-get.js';
import { answerFromPage, type PageAnswer } from './page-question.js';
import { splitPages } from './split-pages.js';

/** Characters of Markdown per page of the result. */
const WEB_PAGE_CHARS = 12_000;
/** Less visible text than this on an HTML page means it is built by JavaScript (or empty). */
const THIN_TEXT_CHARS = 200;
/** Pages kept per session so that paging through one does not fetch it again. */
const CACHE_ENTRIES = 8;
const CACHE_KEY = 'web_fetch.pages';

interface Page {
  url: string;
  title: string;
  markdown: string;
  /** Said once above the content: how it was obtained, what was cut. */
  notes: string[];
}

export const webFetchTool = defineTool({
  name: 'web_fetch',
  description:
    'Fetch a web page (http/https) as Markdown. Long pages come in pages. With a prompt, only the answer to it from the page comes back.',
  parameters: z.object({
    url: z.string().min(1),
    prompt: z.string().min(1).optional().describe('What to find out from the page'),
    page: z.number().int().min(1).optional().describe('Page of a long result (default 1)'),
  }),
  // A request carries whatever the model puts in the URL out of the machine, so it asks like a change.
  mutates: true,
  touches: (args) => ({ urls: [args.url] }),
  async run(args, ctx) {
    const access = ctx.web ?? DEFAULT_WEB_ACCESS;
    let url: URL;
    try {
      url = parseHttpUrl(args.url);
    } catch (err) {
      throw new ToolError((err as Error).message);
    }
    const cache = pageCache(ctx);
    let page = cache.get(url.href);
    if (page === undefined) {
      const fetched = await fetchPage(url, access, ctx);
      if ('output' in fetched) return fetched;
      page = fetched;
      cache.delete(url.href);
      cache.set(url.href, page);
      while (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    }
    if (args.prompt !== undefined && ctx.model) return promptOutput(page, args.prompt, ctx);
    return pageOutput(page, args.page ?? 1);
  },
});

/** The model's answer to the prompt from the page, in place of the page. */
async function promptOutput(page: Page, prompt: string, ctx: ToolContext): Promise<ToolOutput> {
  let found: PageAnswer;
  try {
    found = await answerFromPage(page, prompt, ctx.model!, ctx.signal, ctx.progress);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    throw new ToolError(
      `${page.url} was fetched, but the model could not answer from it: ${(err as Error).message}. Call web_fetch without a prompt to read the page.`,
    );
  }
  const cut =
    found.read < found.parts
      ? [`[only the first ${found.read} of ${found.parts} parts of the page were read]`]
      : [];
  return {
    output: `${pageHead(page, [...page.notes, ...cut])}\n\n${found.answer || '(the model gave no answer)'}`,
    meta: { url: page.url, parts: found.parts, read: found.read },
  };
}

async function fetchPage(url: URL, access: WebAccess, ctx: ToolContext): Promise<Page | ToolOutput> {
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(access.timeoutMs)]);
  let reply: Awaited<ReturnType<typeof httpGet>>;
  try {
    reply = await httpGet(url.href, { policy: access.policy, maxBytes: access.maxBytes, signal });
  } catch (err) {
    throw new ToolError(failure(err, url, access, ctx.signal));
  }
  if ('redirect' in reply) {
    return {
      output: `${reply.from} redirected (HTTP ${reply.status}) to another site: ${reply.redirect}\nCall web_fetch with that URL to follow it.`,
      meta: { redirect: reply.redirect },
    };
  }
  const type = reply.contentType.split(';')[0]!.trim().toLowerCase();
  const notes: string[] = [];
  if (reply.truncated) notes.push(`[only the first ${formatBytes(access.maxBytes)} were read]`);
  const isHtml =
    type === 'text/html' || type === 'application/xhtml+xml' || (type === '' && sniffHtml(reply));
  if (!isHtml) return textPage(reply, type, notes);

  const html = decodeText(reply);
  const extracted = await htmlToMarkdown(html, reply.url);
  const challenge = looksLikeChallenge(reply.status, html);
  const thin = extracted.scripted && extracted.textLength < THIN_TEXT_CHARS;
  if (challenge || thin) {
    const why = challenge
      ? 'the site answered with a bot check'
      : 'the page has almost no text without JavaScript';
    const rendered = await tryBrowser(reply.url, access, signal, ctx);
    if ('html' in rendered) {
      const again = await htmlToMarkdown(rendered.html, rendered.url);
      if (again.textLength > extracted.textLength) {
        return {
          url: rendered.url,
          title: again.title,
          markdown: again.markdown,
          notes: [...notes, `[${why}; rendered in ${rendered.browser}]`],
        };
      }
      notes.push(`[${why}; rendering it in ${rendered.browser} found no more]`);
    } else notes.push(`[${why}; ${rendered.unavailable}]`);
  }
  if (reply.status >= 400) {
    throw new ToolError(
      `HTTP ${reply.status} from ${reply.url}.${extracted.markdown ? `\n${extracted.markdown.slice(0, 2000)}` : ''}`,
    );
  }
  return { url: reply.url, title: extracted.title, markdown: extracted.markdown, notes };
}

async function tryBrowser(
  url: string,
  access: WebAccess,
  signal: AbortSignal,
  ctx: ToolContext,
): Promise<BrowserPage | { unavailable: string }> {
  if (access.browser === false)
    return { unavailable: 'rendering in a browser is switched off (web.browser: false)' };
  ctx.progress('rendering the page in a headless browser…');
  try {
    return await renderPage(url, access, signal);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return { unavailable: `the browser could not render it: ${(err as Error).message}` };
  }
}

function textPage(reply: HttpReply, type: string, notes: string[]): Page | ToolOutput {
  const textual =
    type.startsWith('text/') ||
    /^application\/([\w.+-]*\+)?(json|xml|javascript|x-yaml|yaml|toml)$/.test(type) ||
    (type === '' && !reply.body.subarray(0, 1024).includes(0));
  if (!textual) {
    return {
      output: `${reply.url} is ${type || 'binary data'} (${formatBytes(reply.body.length)}${reply.truncated ? '+' : ''}), not a page of text; it was not shown.`,
      ok: false,
    };
  }
  if (reply.status >= 400)
    throw new ToolError(`HTTP ${reply.status} from ${reply.url}.\n${decodeText(reply).slice(0, 2000)}`);
  return { url: reply.url, title: '', markdown: decodeText(reply), notes };
}

function pageOutput(page: Page, wanted: number): ToolOutput {
  const pages = splitPages(page.markdown, WEB_PAGE_CHARS);
  const count = Math.max(pages.length, 1);
  if (wanted > count)
    throw new ToolError(
      `${page.url} has ${count} page${count === 1 ? '' : 's'}; page ${wanted} does not exist.`,
    );
  const head = pageHead(page, wanted === 1 ? page.notes : []);
  const body = pages[wanted - 1] ?? '(the page has no text)';
  const more =
    count > 1
      ? `\n\n[page ${wanted} of ${count}${wanted < count ? `; call web_fetch with page: ${wanted + 1} for more` : ''}]`
      : '';
  return { output: `${head}\n\n${body}${more}`, meta: { url: page.url, page: wanted, pages: count } };
}

/** The title, the address and what is said once above the content. */
function pageHead(page: Page, notes: string[]): string {
  return [...(page.title ? [`# ${page.title}`] : []), `URL: ${page.url}`, ...notes].join('\n');
}

function pageCache(ctx: ToolContext): Map<string, Page> {
  let cache = ctx.scratch.get(CACHE_KEY) as Map<string, Page> | undefined;
  if (!cache) {
    cache = new Map();
    ctx.scratch.set(CACHE_KEY, cache);
  }
  return cache;
}

function sniffHtml(reply: HttpReply): boolean {
  return /^\s*(<!doctype html|<html|<head|<body)/i.test(reply.body.subarray(0, 512).toString('latin1'));
}

function decodeText(reply: HttpReply): string {
  const charset =
    /charset=["']?([\w-]+)/i.exec(reply.contentType)?.[1] ?? sniffCharset(reply.body) ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(reply.body);
  } catch {
    return new TextDecoder('utf-8').decode(reply.body);
  }
}

function sniffCharset(body: Buffer): string | undefined {
  return /<meta[^>]+charset=["']?([\w-]+)/i.exec(body.subarray(0, 2048).toString('latin1'))?.[1];
}

function failure(err: unknown, url: URL, access: WebAccess, outer: AbortSignal): string {
  if (outer.aborted) return 'Cancelled.';
  if (err instanceof BlockedAddressError || err instanceof FetchError) return err.message;
  const e = err as Error;
  if (e.name === 'TimeoutError' || e.name === 'AbortError')
    return `${url.href} did not answer within ${Math.round(access.timeoutMs / 1000)}s.`;
  return `Could not fetch ${url.href}: ${e.message}`;
}
