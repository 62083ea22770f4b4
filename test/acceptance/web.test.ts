import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumMissing, SCREENSHOTS, useChromium } from '../support/browser.js';
import { useCliHarness } from '../support/cli-harness.js';
import { atPrompt, keys } from '../support/pty.js';
import { reply } from '../support/scripted-server.js';
import { withDeadline } from '../support/wait.js';
import { loggedInPage, startServe } from './support.js';

/**
 * The web UI and `hearth attach` of the installed bin, on sessions as users make them: begun in the
 * REPL, carried on through the gateway, then in the terminal again. In headless Chromium.
 */
if (chromiumMissing) console.warn(chromiumMissing);

describe.skipIf(chromiumMissing !== undefined)(`the installed web UI and attach (${CHROMIUM})`, () => {
  const cli = useCliHarness('acc-webui');
  const browser = useChromium();

  /** The user's profile goes into each new session's first message, inside a `<memories>` block. */
  const withProfile = async () => {
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(join(cli.hearthHome, 'USER.md'), 'Prefers short answers.\n');
    await writeFile(join(cli.hearthHome, 'config.json'), JSON.stringify({ memory: { reflect: 'off' } }));
  };
  const idle = (page: Page) => page.locator('main.conversation[data-running="no"]').waitFor();

  it('shows a session begun in the REPL, carried on with attach and again in the terminal, whole and in order', async () => {
    await withProfile();
    await cli.serve([
      reply().tool('read_file', { path: 'missing.txt' }),
      reply().text('There is no missing.txt.'),
      reply().text('Second answer, through attach.'),
      reply().tool('list_dir', { path: '.' }),
      reply().text('Third answer, in the terminal again.'),
    ]);
    await writeFile(join(cli.workspace, 'present.txt'), 'here\n');

    // 1. The REPL: a call that fails.
    const term = cli.terminal([]);
    await term.waitFor(atPrompt);
    await term.enter('read missing.txt');
    term.send('/exit\r');
    expect(await withDeadline(term.exited, 'the REPL to exit')).toBe(0);
    const listed = await cli.run(['sessions']);
    const id = /^([0-9a-f]{6,})\s/m.exec(listed.stdout)?.[1];
    expect(id, listed.stdout).toBeDefined();
    const model = cli.server.requests[0]!.body as { messages: Array<{ role: string; content: string }> };
    // What the model got: the memory block first, then what was typed.
    expect(model.messages[1]!.content).toMatch(
      /^<memories>[\s\S]*Prefers short answers[\s\S]*read missing\.txt$/,
    );

    // 2. Through the gateway, with attach.
    const gw = await startServe(cli);
    const first = await cli.run(['attach', id!], { stdin: 'what now?\n' });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('Second answer, through attach.');
    expect(first.stderr).toContain('› read missing.txt');
    expect(first.stderr).not.toContain('<memories>');
    expect(first.stderr).not.toContain('Prefers short answers');

    // 3. The terminal again (a one-shot run resuming it), with a call that succeeds.
    const third = await cli.run(['--resume', id!, 'list the files']);
    expect(third.code, third.stderr).toBe(0);
    expect(third.stdout).toContain('Third answer');

    // The web UI shows all three turns, in order, the failed call as failed.
    const page = await loggedInPage(browser(), gw);
    await page.goto(`${gw.url}/#/s/${id}`);
    await page.locator('.item.answer', { hasText: 'Third answer' }).waitFor();
    await idle(page);
    expect(await page.locator('.item.user .bubble').allTextContents()).toEqual([
      'read missing.txt',
      'what now?',
      'list the files',
    ]);
    const answers = (await page.locator('.item.answer').allTextContents()).map((a) => a.trim());
    expect(answers).toEqual([
      'There is no missing.txt.',
      'Second answer, through attach.',
      'Third answer, in the terminal again.',
    ]);
    const failed = page.locator('.item.tool[data-tool="read_file"]');
    expect(await failed.getAttribute('class')).toContain('failed');
    expect(await failed.locator('.state').textContent()).toBe('failed');
    expect(await page.locator('.item.tool[data-tool="list_dir"]').getAttribute('class')).toContain('ok');
    await page.screenshot({ path: join(SCREENSHOTS, 'acceptance-terminal-session-desktop.png') });

    // attach again, only to look: every turn, in order, the REPL's too, with the failure marked.
    const again = await cli.run(['attach', id!], { stdin: '' });
    expect(again.code, again.stderr).toBe(0);
    const shown = again.stderr;
    const order = ['› read missing.txt', '✗ read_file', '› what now?', '› list the files', '✓ list_dir'].map(
      (part) => shown.indexOf(part),
    );
    expect(
      order.every((at) => at >= 0),
      shown,
    ).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(shown).not.toContain('<memories>');
    expect(`${again.stdout}${shown}`).toContain('Third answer, in the terminal again.');
  });

  /** The approval card's Deny button is on screen and nothing covers it; the card fits the conversation. */
  const denyUsable = async (page: Page, card: Locator, width: number) => {
    const deny = card.getByRole('button', { name: 'Deny' });
    const box = (await deny.boundingBox())!;
    const items = (await page.locator('.items').boundingBox())!;
    const cardBox = (await card.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(Math.min(width, items.x + items.width));
    expect(cardBox.x + cardBox.width).toBeLessThanOrEqual(items.x + items.width);
    // What a tap at the button's middle reaches is the button itself (not clipped away, not covered).
    const hit = await page.evaluate(
      ([x, y]) => {
        const { document } = globalThis as unknown as {
          document: { elementFromPoint(x: number, y: number): { textContent: string | null } | null };
        };
        const el = document.elementFromPoint(x!, y!);
        return el?.textContent ?? '';
      },
      [box.x + box.width / 2, box.y + box.height / 2],
    );
    expect(hit).toBe('Deny');
    // The conversation does not scroll sideways: the long text wraps or scrolls inside its own box.
    const sideways = await page.locator('.items').evaluate((el) => el.scrollWidth - el.clientWidth);
    expect(sideways).toBeLessThanOrEqual(1);
  };

  it('starts a session from the first screen; an approval with a long line keeps Deny on screen, desktop and phone', async () => {
    const longName = `${'deeply-nested-name-'.repeat(9)}end.txt`;
    const longLine = `${'x'.repeat(400)}/${'y'.repeat(300)}`;
    await cli.serve([
      reply().tool('write_file', { path: longName, content: `${longLine}\n` }),
      reply().text('Not written, as you asked.'),
    ]);
    const gw = await startServe(cli);
    // Its output is not a terminal: no login code goes into a log.
    expect(gw.out()).not.toMatch(/#login=/);
    const page = await loggedInPage(browser(), gw);

    // The first screen (no session open) has a message box; typing there starts a session.
    await page.locator('main.empty').waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'acceptance-first-screen-desktop.png') });
    const box = page.getByLabel('Message');
    await box.fill('write the long file');
    await box.press('Enter');
    await page.waitForURL(/#\/s\//);
    const id = decodeURIComponent(new URL(page.url()).hash.replace('#/s/', ''));
    expect(await page.locator('.item.user .bubble').first().textContent()).toBe('write the long file');

    const card = page.getByRole('group', { name: 'Approval' });
    await card.waitFor();
    await denyUsable(page, card, 1280);
    await page.screenshot({ path: join(SCREENSHOTS, 'acceptance-approval-long-line-desktop.png') });

    const phone = await loggedInPage(browser(), gw, { phone: true });
    await phone.goto(`${gw.url}/#/s/${encodeURIComponent(id)}`);
    const phoneCard = phone.getByRole('group', { name: 'Approval' });
    await phoneCard.waitFor();
    await denyUsable(phone, phoneCard, 390);
    await phone.screenshot({ path: join(SCREENSHOTS, 'acceptance-approval-long-line-phone.png') });
    await phoneCard.getByRole('button', { name: 'Deny' }).click();
    await phone.locator('.item.answer', { hasText: 'Not written' }).waitFor();
    expect(await phone.locator('.approval.answered').textContent()).toContain('Denied');
    await page.locator('.item.answer', { hasText: 'Not written' }).waitFor();
    expect(cli.server.requests).toHaveLength(2);
  });

  it('prints a one-time login link at the terminal that logs a browser in once', async () => {
    await cli.serve([]);
    const term = cli.terminal(['serve', '--port', '0']);
    await term.waitFor(/Ctrl\+C stops it/);
    const link = /(http:\/\/127\.0\.0\.1:\d+\/#login=[\w-]+)/.exec(term.screen)?.[1];
    expect(link, term.screen).toBeDefined();
    expect(term.screen).toMatch(/one-time/i);

    const context = await browser().newContext();
    const page = await context.newPage();
    await page.goto(link!);
    await page.locator('header.topbar').waitFor();
    expect(page.url()).not.toContain('login=');
    // Used once: the same link in another browser finds the login form.
    const other = await (await browser().newContext()).newPage();
    await other.goto(link!);
    await other.getByLabel('PIN or token').waitFor();
    term.send(keys.ctrlC);
    await withDeadline(term.exited, 'hearth serve to stop');
  });
});
