import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumMissing, useChromium } from '../support/browser.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';
import { waitUntil } from '../support/wait.js';
import { loggedInPage, startServe } from './support.js';

/**
 * Diagnostics after an edit, seen through the installed `hearth serve`: on the session's events and
 * under the tool call in the web UI (headless Chromium), from typescript-language-server on PATH.
 */
if (chromiumMissing) console.warn(chromiumMissing);

/** This checkout's node_modules/.bin on PATH, as a global install of the servers would be. */
const BIN = join(import.meta.dirname, '../../node_modules/.bin');
const SLOW_MS = 240_000;

describe.skipIf(chromiumMissing !== undefined)(`diagnostics in the gateway and web UI (${CHROMIUM})`, () => {
  const cli = useCliHarness('acc-web-diagnostics');
  const browser = useChromium();

  it(
    'a scripted edit that brings a type error: the error is on the tool_result event and under the call',
    async () => {
      await mkdir(cli.hearthHome, { recursive: true });
      // A cold server on a loaded machine takes its time: the deadline the tests' config allows.
      await writeFile(
        join(cli.hearthHome, 'config.json'),
        JSON.stringify({ permissions: { mode: 'auto' }, diagnostics: { timeout: 110 } }),
      );
      await writeFile(
        join(cli.workspace, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { strict: true } }),
      );
      await writeFile(join(cli.workspace, 'a.ts'), 'export const a: number = 1;\n');
      await cli.serve([
        reply().tool('edit_file', {
          path: 'a.ts',
          old_string: 'export const a: number = 1;\n',
          new_string: 'export const a: number = 1;\nexport const b: number = "two";\n',
        }),
        reply().text('Done.'),
      ]);
      const gw = await startServe(cli, ['--no-scheduler'], { env: { PATH: `${BIN}:${process.env.PATH}` } });
      await gw.json('/api/sessions', { id: 's-diag' });
      const events: Array<{ type: string; diagnostics?: string }> = [];
      const ws = await gw.socket('/ws/s-diag', (data) => events.push(JSON.parse(String(data))));

      const page = await loggedInPage(browser(), gw);
      await page.goto(`${gw.url}/#/s/s-diag`);
      const box = page.getByLabel('Message');
      await box.fill('add b');
      await box.press('Enter');
      const shown = page.locator('.item .diagnostics');
      await shown.waitFor({ timeout: SLOW_MS });
      expect(await shown.textContent()).toMatch(
        /a\.ts: 1 error[\s\S]*line 2: Type 'string' is not assignable to type 'number'/,
      );

      await waitUntil(() => events.some((e) => e.type === 'done'), 'the turn to end');
      const result = events.find((e) => e.type === 'tool_result');
      expect(result?.diagnostics).toMatch(/line 2: Type 'string' is not assignable to type 'number'/);
      ws.close();
    },
    SLOW_MS,
  );
});
