import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { buildWeb } from '../../web/build.js';
import { startGateway, type TestGateway, TOKEN } from './gateway.js';
import type { TurnInput } from './scripted-server.js';

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

/** Debian's Chromium, headless, through playwright-core. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  await mkdir(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    // Chromium's own sandbox cannot start as root (CI containers run as root).
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
}

/** For a describe block: Chromium started once before its tests and closed after them. */
export function useChromium(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error('useChromium: Chromium is not started yet');
    return browser;
  };
}

export async function startBrowser(): Promise<BrowserRig> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'hearth-web-')));
  const { outdir } = await buildWeb(join(dir, 'web'));
  const browser = await launchChromium();
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
 * For a describe block of browser tests: Chromium started once, and after each test its contexts
 * closed and the gateway `start` made closed. `start` serves the UI built for this run.
 */
export function useWebGateway() {
  let rig: BrowserRig | undefined;
  let gw: TestGateway | undefined;
  beforeAll(async () => {
    rig = await startBrowser();
  }, 120_000);
  afterAll(async () => {
    await rig?.close();
  });
  afterEach(async () => {
    for (const context of rig?.browser.contexts() ?? []) await context.close();
    await gw?.close();
    gw = undefined;
  });
  const started = (): BrowserRig => {
    if (!rig) throw new Error('useWebGateway: the browser is not started yet');
    return rig;
  };
  return {
    get rig(): BrowserRig {
      return started();
    },
    async start(
      turns: TurnInput[] = [],
      options: Omit<NonNullable<Parameters<typeof startGateway>[1]>, 'gateway'> = {},
    ): Promise<TestGateway> {
      gw = await startGateway(turns, { gateway: { webRoot: started().webRoot }, ...options });
      return gw;
    },
  };
}
