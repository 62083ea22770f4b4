import { describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumMissing, useChromium } from '../support/browser.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';
import { loggedInPage, startServe } from './support.js';

/** The installed `hearth serve` and the web UI it ships, in headless Chromium. */
if (chromiumMissing) console.warn(chromiumMissing);

describe.skipIf(chromiumMissing !== undefined)(`the installed gateway's web UI (${CHROMIUM})`, () => {
  const cli = useCliHarness('acc-web');
  const browser = useChromium();

  it('serves the built page (not the "not built" notice), logs in and answers a message', async () => {
    await cli.serve([reply().text('Hello from **the model**.')]);
    const gw = await startServe(cli);
    const index = await fetch(gw.url);
    expect(await index.text()).not.toContain('not built');

    const page = await loggedInPage(browser(), gw);
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await page.waitForURL(/#\/s\//);
    const box = page.getByLabel('Message');
    await box.fill('Say hello');
    await box.press('Enter');
    await page.locator('.item.answer strong', { hasText: 'the model' }).waitFor();
    expect(cli.server.requests).toHaveLength(1);
  });
});
