import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildWeb } from '../../web/build.js';
import { TOKEN } from './gateway.js';

/**
 * Debian's `chromium` driven by playwright-core (never a downloaded browser). HEARTH_CHROMIUM
 * names another binary. Tests skip, saying why, only when there is none.
 */
export const CHROMIUM = process.env.HEARTH_CHROMIUM ?? '/usr/bin/chromium';
export const chromiumMissing = existsSync(CHROMIUM)
  ? undefined
  : `No Chromium at ${CHROMIUM}: the browser tests are skipped (apt-get install chromium, or set HEARTH_CHROMIUM).`;

/** Where the test run leaves its screenshots for a reviewer. */
export const SCREENSHOTS = join(process.cwd(), 'test-results', 'web');

export interface BrowserRig {
  browser: Browser;
  /** The UI built from web/src for this run. */
  webRoot: string;
  close(): Promise<void>;
}

export async function startBrowser(): Promise<BrowserRig> {
  const { chromium } = await import('playwright-core');
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'hearth-web-')));
  const { outdir } = await buildWeb(join(dir, 'web'));
  await mkdir(SCREENSHOTS, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Chromium's own sandbox cannot start as root (CI containers run as root).
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  return {
    browser,
    webRoot: outdir,
    async close() {
      await browser.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A browser context logged in to the gateway at `url` through its login form. */
export async function loggedIn(
  rig: BrowserRig,
  url: string,
  options: { colorScheme?: 'light' | 'dark'; phone?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await rig.browser.newContext({
    colorScheme: options.colorScheme ?? 'light',
    viewport: options.phone ? { width: 390, height: 844 } : { width: 1280, height: 800 },
    ...(options.phone ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
  });
  const page = await context.newPage();
  await page.goto(url);
  await page.getByLabel('PIN or token').fill(TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('header.topbar').waitFor();
  return { context, page };
}

/**
 * A TCP relay in front of the gateway: a browser talking through it loses its connections when
 * the test says the network dropped, and cannot connect again until it says the network is back.
 */
export async function startRelay(
  target: number,
): Promise<{ url: string; drop(): void; restore(): void; close(): Promise<void> }> {
  const { createServer, connect } = await import('node:net');
  const open = new Set<import('node:net').Socket>();
  let down = false;
  const server = createServer((client) => {
    if (down) return void client.destroy();
    const upstream = connect(target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as import('node:net').AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    drop() {
      down = true;
      for (const socket of open) socket.destroy();
    },
    restore() {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
