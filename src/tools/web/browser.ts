import { constants } from 'node:fs';
import { access as fsAccess } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import type { WebAccess } from './access.js';
import { parseHttpUrl, requestOnce } from './http-get.js';

/**
 * Tier 2 of web_fetch: a page built by JavaScript, rendered in headless Chromium through
 * `playwright-core` (an optional dependency, imported only here and only when needed) with a
 * browser already on the machine; Hearth never downloads one.
 *
 * The browser makes no connection of its own. Every request the page makes is intercepted and
 * answered by Hearth's guarded client (http-get.ts), so the address checks hold for scripts,
 * frames and images too, DNS rebinding included. What interception cannot catch (WebSockets,
 * anything outside the page's routing) goes to a proxy address where nothing listens, loopback
 * included, and fails. Only GET and HEAD are passed on: reading a page needs no more.
 */
export interface BrowserPage {
  html: string;
  /** Where the page ended up. */
  url: string;
  /** The browser's file name, for the note in the result. */
  browser: string;
}

/** Requests one render may make; a page that keeps loading forever is cut here. */
const MAX_REQUESTS = 300;
/** How long to wait for the page's scripts to go quiet once it has loaded. */
const SETTLE_MS = 3000;

const CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/snap/bin/chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
];

/** The browser to use: the configured one, or the first found; undefined when there is none. */
export async function findBrowser(configured: string | undefined): Promise<string | undefined> {
  const list = configured ? [configured] : CANDIDATES;
  for (const candidate of list) {
    if (
      await fsAccess(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return undefined;
}

export async function renderPage(url: string, access: WebAccess, signal: AbortSignal): Promise<BrowserPage> {
  const executable = await findBrowser(access.browser || undefined);
  if (executable === undefined) {
    throw new Error(
      access.browser
        ? `${access.browser} is not an executable browser`
        : 'no Chromium or Chrome was found (install chromium, or set HEARTH_CHROMIUM to its path)',
    );
  }
  let playwright: typeof import('playwright-core');
  try {
    playwright = await import('playwright-core');
  } catch {
    throw new Error('playwright-core is not installed (npm install playwright-core)');
  }
  const browser = await playwright.chromium.launch({
    executablePath: executable,
    headless: true,
    args: ['--proxy-server=http://127.0.0.1:9', '--proxy-bypass-list=<-loopback>', '--disable-gpu'],
  });
  const closeOnAbort = () => void browser.close().catch(() => {});
  signal.addEventListener('abort', closeOnAbort, { once: true });
  try {
    const context = await browser.newContext({ serviceWorkers: 'block', acceptDownloads: false });
    const page = await context.newPage();
    let requests = 0;
    let bytes = 0;
    await page.route('**/*', async (route) => {
      const request = route.request();
      let target: URL;
      try {
        target = parseHttpUrl(request.url());
      } catch {
        return route.abort('blockedbyclient');
      }
      if (
        !['GET', 'HEAD'].includes(request.method()) ||
        ++requests > MAX_REQUESTS ||
        bytes >= access.maxBytes
      ) {
        return route.abort('blockedbyclient');
      }
      try {
        const hop = await requestOnce(target, {
          policy: access.policy,
          maxBytes: access.maxBytes - bytes,
          signal,
          headers: pick(request.headers(), ['accept', 'referer', 'user-agent']),
        });
        if ('location' in hop)
          return await route.fulfill({ status: hop.status, headers: { location: hop.location } });
        bytes += hop.body.length;
        return await route.fulfill({
          status: hop.status,
          headers: passedHeaders(hop.headers),
          body: hop.body,
        });
      } catch {
        return route.abort('addressunreachable').catch(() => {});
      }
    });
    const remaining = Math.max(1000, access.timeoutMs - SETTLE_MS);
    await page.goto(url, { waitUntil: 'load', timeout: remaining });
    await page.waitForLoadState('networkidle', { timeout: SETTLE_MS }).catch(() => {});
    return {
      html: await page.content(),
      url: page.url(),
      browser: executable.split('/').pop() ?? executable,
    };
  } finally {
    signal.removeEventListener('abort', closeOnAbort);
    await browser.close().catch(() => {});
  }
}

function pick(headers: Record<string, string>, names: string[]): Record<string, string> {
  return Object.fromEntries(names.filter((n) => headers[n] !== undefined).map((n) => [n, headers[n]!]));
}

/** The reply's headers as the browser should see them: the body is already decoded and whole. */
function passedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (
      ['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(name)
    )
      continue;
    out[name] = Array.isArray(value) ? value.join(name === 'set-cookie' ? '\n' : ', ') : value;
  }
  return out;
}
