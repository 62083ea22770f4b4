import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { toolResultMessage } from '../../src/agent/tool-message.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { memoryBlock } from '../../src/memory/memory-block.js';
import { chromiumMissing, loggedIn, SCREENSHOTS, useWebGateway } from '../support/browser.js';
import type { TestGateway } from '../support/gateway.js';
import { startRelay } from '../support/net.js';
import { reply } from '../support/scripted-server.js';

/**
 * The web UI end to end: the real bundle served by the gateway, driven in headless Chromium,
 * against the scripted model server. Waits are on what the page shows, never on time.
 */
if (chromiumMissing) console.warn(chromiumMissing);

/** A 1×1 PNG. */
const PIXEL =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

type Dispatcher = { dispatchEvent(event: unknown): boolean };
interface PageGlobals {
  DataTransfer: new () => { items: { add(file: File): void } };
  ClipboardEvent: new (type: string, init: object) => unknown;
  DragEvent: new (type: string, init: object) => unknown;
  document: { querySelector(selector: string): Dispatcher | null };
}

/**
 * Pastes the PNG into the message box (as a pasted screenshot arrives) or drops it on the
 * composer (as a file dragged from the desktop does), with a DataTransfer built in the page.
 */
const giveImage = (page: Page, how: 'paste' | 'drop', name: string) =>
  page.evaluate(
    ([how, name, data]) => {
      // The page's own globals (this file is type-checked without the DOM library).
      const { DataTransfer, ClipboardEvent, DragEvent, document } = globalThis as unknown as PageGlobals;
      const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([bytes], name, { type: 'image/png' }));
      const init = { bubbles: true, cancelable: true };
      if (how === 'paste') {
        const box = document.querySelector('textarea[aria-label="Message"]')!;
        box.dispatchEvent(new ClipboardEvent('paste', { ...init, clipboardData: transfer }));
      } else {
        const form = document.querySelector('form.composer')!;
        form.dispatchEvent(new DragEvent('dragover', { ...init, dataTransfer: transfer }));
        form.dispatchEvent(new DragEvent('drop', { ...init, dataTransfer: transfer }));
      }
    },
    [how, name, PIXEL] as const,
  );

describe.skipIf(chromiumMissing !== undefined)('the web UI in Chromium', () => {
  const web = useWebGateway();
  const { start } = web;

  /** Opens a new session and sends `text` with Enter. */
  const newSessionAndSend = async (page: Page, text: string) => {
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await page.waitForURL(/#\/s\//);
    await send(page, text);
  };
  const send = async (page: Page, text: string) => {
    const box = page.getByLabel('Message');
    await box.fill(text);
    await box.press('Enter');
  };
  const idle = (page: Page) => page.locator('main.conversation[data-running="no"]').waitFor();
  /** A session as a terminal run leaves it: stored messages, no gateway events. */
  const storedByTerminal = async (g: TestGateway, id: string, messages: ChatMessage[]) => {
    const { openDatabase } = await import('../../src/store/sqlite/database.js');
    const { SessionStore } = await import('../../src/store/sqlite/session-store.js');
    const db = openDatabase(g.dbPath);
    new SessionStore(db).create({ id, workspace: g.workspace, title: 'From the terminal' }, messages);
    db.close();
  };
  /** More of a session as a later terminal run adds it. */
  const storedLater = async (g: TestGateway, id: string, messages: ChatMessage[]) => {
    const { openDatabase } = await import('../../src/store/sqlite/database.js');
    const { SessionStore } = await import('../../src/store/sqlite/session-store.js');
    const db = openDatabase(g.dbPath);
    const store = new SessionStore(db);
    for (const message of messages) store.appendMessage(id, message);
    db.close();
  };

  it('logs in, sends a task and shows the streamed answer as Markdown, in light and dark, desktop and phone', async () => {
    const g = await start([
      reply().tool('read_file', { path: 'notes.txt' }),
      reply()
        .text('The note says **hello**.\n\n- one\n- two\n\nSee [the docs](https://example.com/docs).')
        .chunkSize(6),
    ]);
    await import('node:fs/promises').then((fs) => fs.writeFile(join(g.workspace, 'notes.txt'), 'hello\n'));
    const { page } = await loggedIn(web.rig, g.url);
    await newSessionAndSend(page, 'What does notes.txt say?');

    const answer = page.locator('.item.answer').last();
    await answer.locator('strong', { hasText: 'hello' }).waitFor();
    await idle(page);
    expect(await answer.locator('li').allTextContents()).toEqual(['one', 'two']);
    const link = answer.locator('a');
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await link.getAttribute('rel')).toContain('noopener');
    const row = page.locator('.item.tool[data-tool="read_file"]');
    expect(await row.getAttribute('class')).toContain('ok');
    expect(await row.locator('.label').textContent()).toContain('notes.txt');
    await row.locator('summary').click();
    expect(await row.locator('pre.output').textContent()).toContain('hello');
    expect(await page.getByTestId('context').textContent()).toMatch(/\/ 32(\.0)?k tokens/);

    // The session list shows it; screenshots of the main screen for a reviewer.
    await page.locator('.sessions li.active').waitFor();
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const phone of [false, true]) {
        const shot = await loggedIn(web.rig, g.url, { colorScheme, phone });
        await shot.page.goto(page.url());
        await shot.page.locator('.item.answer strong').waitFor();
        await shot.page.screenshot({
          path: join(SCREENSHOTS, `conversation-${colorScheme}-${phone ? 'phone' : 'desktop'}.png`),
        });
        if (phone) {
          await shot.page.getByRole('button', { name: 'Sessions' }).click();
          await shot.page.locator('.sessions').waitFor({ state: 'visible' });
          await shot.page.screenshot({ path: join(SCREENSHOTS, `sessions-${colorScheme}-phone.png`) });
        }
        await shot.context.close();
      }
    }
  }, 90_000);

  it('logs in once through a one-time link, as hearth serve --open does', async () => {
    const g = await start([]);
    const link = g.server.loginLink(g.url);
    const first = await web.rig.browser.newContext();
    const page = await first.newPage();
    await page.goto(link);
    await page.getByRole('button', { name: 'New', exact: true }).waitFor();
    expect(new URL(page.url()).hash).toBe('');
    const second = await (await web.rig.browser.newContext()).newPage();
    await second.goto(link);
    await second.getByLabel('PIN or token').waitFor();
  });

  it('asks before a write, shows the diff, and writes once allowed', async () => {
    const g = await start([
      reply().tool('write_file', { path: 'greeting.txt', content: 'hello\nworld\n' }),
      reply().text('Written.'),
    ]);
    const { page } = await loggedIn(web.rig, g.url);
    await newSessionAndSend(page, 'write a greeting');
    const approval = page.getByRole('group', { name: 'Approval' });
    await approval.waitFor();
    expect(await approval.locator('.summary').textContent()).toContain('greeting.txt');
    expect(await approval.locator('.diff .add').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('+hello'), expect.stringContaining('+world')]),
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'approval-light-desktop.png') });
    await approval.getByRole('button', { name: 'Allow once' }).click();
    await page.locator('.item.answer', { hasText: 'Written.' }).waitFor();
    expect(await readFile(join(g.workspace, 'greeting.txt'), 'utf8')).toBe('hello\nworld\n');
    expect(await page.locator('.approval.answered').textContent()).toContain('Allowed once');
  });

  it('denies a call with a reason the model is told', async () => {
    const g = await start([
      reply().tool('write_file', { path: 'secret.txt', content: 'x' }),
      reply().text('Understood, I will not.'),
    ]);
    const { page } = await loggedIn(web.rig, g.url);
    await newSessionAndSend(page, 'write secret.txt');
    const approval = page.getByRole('group', { name: 'Approval' });
    await approval.getByLabel('Reason for denying').fill('not that file');
    await approval.getByRole('button', { name: 'Deny' }).click();
    await page.locator('.item.answer', { hasText: 'Understood' }).waitFor();
    const row = page.locator('.item.tool[data-tool="write_file"]');
    expect(await row.getAttribute('class')).toContain('failed');
    expect(await row.locator('.approval.answered').textContent()).toContain('Denied');
    const told = JSON.stringify(g.llm.requests.at(-1)!.body.messages);
    expect(told).toContain('not that file');
    await expect(readFile(join(g.workspace, 'secret.txt'))).rejects.toThrow();
  });

  it('stops a slow stream with Esc while the model is still sending', async () => {
    const g = await start([reply().text('Counting: one, two, three, four, five.').chunkSize(8).holdAfter(2)]);
    const { page } = await loggedIn(web.rig, g.url);
    await newSessionAndSend(page, 'count slowly');
    await page.locator('.item.answer', { hasText: 'Counting' }).waitFor();
    await g.llm.waitForHolds(1);
    await page.keyboard.press('Escape');
    // The model server is still holding its stream: the stop does not wait for it.
    await page.locator('.item.notice', { hasText: 'Stopped.' }).waitFor();
    await idle(page);
    expect(await page.locator('.item.answer').last().textContent()).not.toContain('five');
  });

  it('shows a message sent during a turn as queued, then runs it', async () => {
    const g = await start([reply().text('First answer.').holdAfter(1), reply().text('Second answer.')]);
    const { page } = await loggedIn(web.rig, g.url);
    await newSessionAndSend(page, 'first');
    await g.llm.waitForHolds(1);
    await send(page, 'second');
    const queued = page.locator('.item.user.queued', { hasText: 'second' });
    await queued.waitFor();
    expect(await queued.locator('.badge').textContent()).toBe('queued');
    g.llm.release();
    await page.locator('.item.answer', { hasText: 'Second answer.' }).waitFor();
    expect(await page.locator('.item.user.queued').count()).toBe(0);
    expect(await page.locator('.item.user .bubble').allTextContents()).toEqual(['first', 'second']);
  });

  it('reloads mid-turn and carries on from the same point', async () => {
    const g = await start([
      reply().tool('read_file', { path: 'a.txt' }),
      reply().text('Alpha beta gamma delta.').chunkSize(6).holdAfter(2),
    ]);
    await import('node:fs/promises').then((fs) => fs.writeFile(join(g.workspace, 'a.txt'), 'a\n'));
    const { page } = await loggedIn(web.rig, g.url);
    await newSessionAndSend(page, 'read a');
    await page.locator('.item.answer', { hasText: 'Alpha' }).waitFor();
    await g.llm.waitForHolds(1);
    await page.reload();
    await page.locator('.item.answer', { hasText: 'Alpha' }).waitFor();
    expect(await page.locator('.item.tool[data-tool="read_file"]').count()).toBe(1);
    expect(await page.locator('main.conversation').getAttribute('data-running')).toBe('yes');
    g.llm.release();
    await page.locator('.item.answer', { hasText: 'Alpha beta gamma delta.' }).waitFor();
    await idle(page);
    expect(await page.locator('.item.user .bubble').allTextContents()).toEqual(['read a']);
  });

  it('reconnects by itself after the network drops and catches up on what it missed', async () => {
    const g = await start([reply().text('Before the drop. After the drop.').chunkSize(17).holdAfter(2)]);
    const relay = await startRelay(g.port);
    try {
      const { page } = await loggedIn(web.rig, relay.url);
      await newSessionAndSend(page, 'talk');
      await page.locator('.item.answer', { hasText: 'Before the drop.' }).waitFor();
      await g.llm.waitForHolds(1);
      const id = decodeURIComponent(new URL(page.url()).hash.slice('#/s/'.length));
      const watcher = await g.socket(`/ws/${id}`);

      relay.drop();
      await page.getByRole('status').filter({ hasText: 'reconnecting' }).waitFor();
      // The turn ends while the page is cut off: it can only learn of it by catching up.
      g.llm.release();
      await watcher.next((m) => m.type === 'done');
      relay.restore();

      await page.locator('.item.answer', { hasText: 'Before the drop. After the drop.' }).waitFor();
      await idle(page);
      expect(await page.locator('.item.answer').count()).toBe(1);
      expect(await page.locator('.item.user').count()).toBe(1);
    } finally {
      await relay.close();
    }
  });

  it('keeps a message sent while the link is down, shows it waiting, and sends it once it is back', async () => {
    const g = await start([reply().text('Got it after all.')]);
    const relay = await startRelay(g.port);
    try {
      const { page } = await loggedIn(web.rig, relay.url);
      await page.getByRole('button', { name: 'New', exact: true }).click();
      await page.waitForURL(/#\/s\//);
      await page.getByRole('status').waitFor({ state: 'detached' });
      relay.drop();
      await page.getByRole('status').filter({ hasText: 'reconnecting' }).waitFor();
      await send(page, 'sent while offline');
      await page.locator('.item.user.queued', { hasText: 'sent while offline' }).waitFor();
      expect(g.llm.requests).toHaveLength(0);
      relay.restore();

      await page.locator('.item.answer', { hasText: 'Got it after all.' }).waitFor();
      await idle(page);
      expect(await page.locator('.item.user .bubble').allTextContents()).toEqual(['sent while offline']);
      expect(await page.locator('.item.user.queued').count()).toBe(0);
    } finally {
      await relay.close();
    }
  });

  it('attaches a pasted and a dropped image, removes one, and sends the other to the vision model', async () => {
    const g = await start([reply().text('A single pink pixel.')], { config: { vision: true } });
    const { page } = await loggedIn(web.rig, g.url);
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await page.waitForURL(/#\/s\//);
    await giveImage(page, 'paste', 'pasted.png');
    await giveImage(page, 'drop', 'dropped.png');
    const thumbnails = page.getByRole('list', { name: 'Attached images' }).locator('img');
    await thumbnails.nth(1).waitFor();
    await page.getByLabel('Message').fill('what is in the picture?');
    await page.screenshot({ path: join(SCREENSHOTS, 'composer-images-light-desktop.png') });
    await page.getByRole('button', { name: 'Remove pasted.png' }).click();
    expect(await thumbnails.evaluateAll((imgs) => imgs.map((i) => i.getAttribute('alt')))).toEqual([
      'dropped.png',
    ]);
    await page.getByLabel('Message').press('Enter');

    await page.locator('.item.answer', { hasText: 'A single pink pixel.' }).waitFor();
    expect(await page.locator('.item.user .pictures img').count()).toBe(1);
    await page.screenshot({ path: join(SCREENSHOTS, 'conversation-image-light-desktop.png') });
    expect(await page.getByRole('list', { name: 'Attached images' }).count()).toBe(0);
    const messages = g.llm.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
    const parts = messages.findLast((m) => m.role === 'user')!.content as Array<{
      type: string;
      image_url?: { url: string };
    }>;
    expect(parts.filter((p) => p.type === 'image_url').map((p) => p.image_url!.url.slice(0, 22))).toEqual([
      'data:image/png;base64,',
    ]);
    // A reload shows the image again, from the stored events alone.
    await page.reload();
    await page.locator('.item.user .pictures img').waitFor();
  });

  it('refuses an image at once, saying why, when the model cannot see', async () => {
    const g = await start([], { config: { vision: false } });
    const { page } = await loggedIn(web.rig, g.url);
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await page.waitForURL(/#\/s\//);
    await giveImage(page, 'paste', 'pasted.png');
    await page.getByRole('alert').filter({ hasText: 'cannot see images' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('scripted-model');
    expect(await page.getByRole('list', { name: 'Attached images' }).count()).toBe(0);
  });

  it('switches the model from the side panel; the next turn uses it', async () => {
    const g = await start([reply().text('From the other model.')], {
      models: ['scripted-model', 'other-model'],
    });
    const { page } = await loggedIn(web.rig, g.url);
    await page.getByRole('button', { name: 'New', exact: true }).click();
    const select = page.getByLabel('Model');
    await select.locator('option', { hasText: 'other-model' }).waitFor({ state: 'attached' });
    await select.selectOption('other-model');
    await page.locator('select[aria-label="Model"]:not([disabled])').waitFor();
    expect(await select.inputValue()).toBe('other-model');
    await send(page, 'hi');
    await page.locator('.item.answer', { hasText: 'From the other model.' }).waitFor();
    expect(g.llm.requests.at(-1)!.body.model).toBe('other-model');
  });

  it('keeps two tabs on one session up to date', async () => {
    const g = await start([
      reply().tool('write_file', { path: 'b.txt', content: 'b\n' }),
      reply().text('Both see this.'),
    ]);
    const { context, page } = await loggedIn(web.rig, g.url);
    await newSessionAndSend(page, 'write b');
    const other = await context.newPage();
    await other.goto(page.url());
    const approval = other.getByRole('group', { name: 'Approval' });
    await approval.waitFor();
    await approval.getByRole('button', { name: 'Allow once' }).click();
    for (const tab of [page, other]) {
      await tab.locator('.item.answer', { hasText: 'Both see this.' }).waitFor();
      expect(await tab.locator('.approval.answered').textContent()).toContain('Allowed once');
    }
  });

  it('shows no remote image, script or inline handler from model output', async () => {
    const g = await start([
      reply().text(
        'Look: ![x](http://127.0.0.1:9/pixel.png) <img src="http://127.0.0.1:9/p.png" onerror="document.title=\'pwned\'"> <script>document.title="pwned"</script> <a href="javascript:alert(1)">click</a> done.',
      ),
    ]);
    const { page } = await loggedIn(web.rig, g.url);
    await newSessionAndSend(page, 'say something odd');
    const answer = page.locator('.item.answer', { hasText: 'done.' });
    await answer.waitFor();
    expect(await answer.locator('img, script').count()).toBe(0);
    expect(await answer.locator('[onerror]').count()).toBe(0);
    expect(await answer.locator('a[href^="javascript"]').count()).toBe(0);
    expect(await page.title()).toBe('Hearth');
  });

  it('browses the workspace tree (lazily, without ignored files) and shows a file read-only', async () => {
    const g = await start([]);
    const fs = await import('node:fs/promises');
    await fs.writeFile(join(g.workspace, '.gitignore'), 'dist/\n');
    await fs.mkdir(join(g.workspace, 'dist'));
    await fs.mkdir(join(g.workspace, 'src'));
    await fs.writeFile(join(g.workspace, 'src', 'main.ts'), 'export const answer = 42;\n');
    await g.json('/api/sessions', { id: 'tree', title: 'Tree' });
    const { page } = await loggedIn(web.rig, g.url);
    await page.goto(`${g.url}/#/s/tree`);
    const tree = page.getByLabel('Workspace files');
    await tree.getByText('src/').waitFor();
    expect(await tree.getByText('dist/').count()).toBe(0);
    expect(await tree.getByRole('button', { name: 'main.ts' }).count()).toBe(0);
    await tree.getByText('src/').click();
    await tree.getByRole('button', { name: 'main.ts' }).click();
    const viewer = page.getByRole('dialog', { name: 'File src/main.ts' });
    await viewer.locator('pre', { hasText: 'answer = 42' }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'file-viewer-light-desktop.png') });
    await viewer.getByRole('button', { name: 'Close' }).click();
    await viewer.waitFor({ state: 'detached' });
  });

  it('shows a session started in the terminal from its stored messages, and continues it', async () => {
    const g = await start([reply().text('Continued here.')]);
    const notes = memoryBlock({ profile: 'Prefers short answers.', memories: [], budget: 800 })!.text;
    await storedByTerminal(g, 'from-cli', [
      { role: 'system', content: 'You are Hearth.' },
      // A first message carries the memory block the model was given; people see what they wrote.
      { role: 'user', content: `${notes}\n\nlist the files` },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'list_dir', arguments: '{"path":"."}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'notes.txt' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'c2',
            type: 'function',
            function: { name: 'use_tool', arguments: '{"name":"git_log","args":{"limit":1}}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'c2', content: 'abc123 first commit' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c3', type: 'function', function: { name: 'read_file', arguments: '{"path":"gone.txt"}' } },
        ],
      },
      toolResultMessage('c3', false, 'File not found: gone.txt'),
      { role: 'assistant', content: 'There is **notes.txt**.' },
    ]);
    const { page } = await loggedIn(web.rig, g.url);
    await page.goto(`${g.url}/#/s/from-cli`);
    await page.locator('.item.answer strong', { hasText: 'notes.txt' }).waitFor();
    expect(await page.locator('.item.user .bubble').allTextContents()).toEqual(['list the files']);
    expect(await page.locator('.item.tool[data-tool="list_dir"]').getAttribute('class')).toContain('ok');
    const failed = page.locator('.item.tool[data-tool="read_file"]');
    expect(await failed.getAttribute('class')).toContain('failed');
    expect(await failed.locator('.state').textContent()).toBe('failed');
    // A call made through use_tool shows as the tool it named, as the live stream shows it.
    expect(await page.locator('.item.tool[data-tool="git_log"]').getAttribute('class')).toContain('ok');
    expect(await page.locator('.item.tool[data-tool="use_tool"]').count()).toBe(0);
    await send(page, 'and now?');
    await page.locator('.item.answer', { hasText: 'Continued here.' }).waitFor();
    expect(await page.locator('.item.user .bubble').allTextContents()).toEqual([
      'list the files',
      'and now?',
    ]);
  });

  it('takes from a history read late only what came before the page, so its own turn shows once', async () => {
    const g = await start([reply().text('Answered live.')]);
    await storedByTerminal(g, 'late', [
      { role: 'system', content: 'You are Hearth.' },
      { role: 'user', content: 'asked in the terminal' },
      { role: 'assistant', content: 'Answered there.' },
    ]);
    const { page } = await loggedIn(web.rig, g.url);
    // A slow link: the history arrives only after the page's own turn is stored and shown.
    let requested!: () => void;
    let shown!: () => void;
    const asked = new Promise<void>((resolve) => (requested = resolve));
    const live = new Promise<void>((resolve) => (shown = resolve));
    await page.route('**/api/sessions/late/history', async (route) => {
      requested();
      await live;
      await route.continue();
    });
    await page.goto(`${g.url}/#/s/late`);
    await asked;
    await send(page, 'asked here');
    await page.locator('.item.answer', { hasText: 'Answered live.' }).waitFor();
    shown();
    await page.locator('.item.answer', { hasText: 'Answered there.' }).waitFor();
    await idle(page);
    expect(await page.locator('.item.user .bubble').allTextContents()).toEqual([
      'asked in the terminal',
      'asked here',
    ]);
    const answers = await page.locator('.item.answer').allTextContents();
    expect(answers.map((a) => a.trim())).toEqual(['Answered there.', 'Answered live.']);
  });

  it('places turns run in the terminal between the gateway’s own, before and after a reload', async () => {
    const g = await start([reply().text('Gateway one.'), reply().text('Gateway two.')]);
    await storedByTerminal(g, 'mixed', [
      { role: 'system', content: 'You are Hearth.' },
      { role: 'user', content: 'terminal one' },
      { role: 'assistant', content: 'Terminal answer one.' },
    ]);
    const { page } = await loggedIn(web.rig, g.url);
    await page.goto(`${g.url}/#/s/mixed`);
    await page.locator('.item.answer', { hasText: 'Terminal answer one.' }).waitFor();
    await send(page, 'gateway one');
    await page.locator('.item.answer', { hasText: 'Gateway one.' }).waitFor();
    await idle(page);
    // The terminal takes the session on, as the REPL would, while the page is open.
    await storedLater(g, 'mixed', [
      { role: 'user', content: 'terminal two' },
      { role: 'assistant', content: 'Terminal answer two.' },
    ]);
    const users = () => page.locator('.item.user .bubble').allTextContents();
    await page.reload();
    await page.locator('.item.answer', { hasText: 'Terminal answer two.' }).waitFor();
    expect(await users()).toEqual(['terminal one', 'gateway one', 'terminal two']);
    // The next turn here marks the terminal's where they came; the page shows each turn once.
    await send(page, 'gateway two');
    await page.locator('.item.answer', { hasText: 'Gateway two.' }).waitFor();
    await idle(page);
    expect(await users()).toEqual(['terminal one', 'gateway one', 'terminal two', 'gateway two']);
    await page.reload();
    await page.locator('.item.answer', { hasText: 'Gateway two.' }).waitFor();
    await idle(page);
    expect(await users()).toEqual(['terminal one', 'gateway one', 'terminal two', 'gateway two']);
    const answers = (await page.locator('.item.answer').allTextContents()).map((a) => a.trim());
    expect(answers).toEqual(['Terminal answer one.', 'Gateway one.', 'Terminal answer two.', 'Gateway two.']);
  });

  it('lists, searches, forks and deletes sessions', async () => {
    const g = await start([reply().text('Noted.')]);
    await g.json('/api/sessions', { id: 'alpha-notes', title: 'Alpha notes' });
    await g.json('/api/sessions', { id: 'beta-plan', title: 'Beta plan' });
    const { page } = await loggedIn(web.rig, g.url);
    const rows = page.locator('.sessions li[data-session]');
    await page.locator('.sessions li[data-session="beta-plan"]').waitFor();
    await page.getByLabel('Search sessions').fill('alpha');
    expect(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-session')))).toEqual([
      'alpha-notes',
    ]);
    await page.getByLabel('Search sessions').fill('');
    await page.getByRole('button', { name: 'Fork Alpha notes' }).click();
    await page.waitForURL((url) => url.hash.startsWith('#/s/') && !url.hash.endsWith('alpha-notes'));
    await page.locator('.sessions li[data-session]').nth(2).waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete Beta plan' }).click();
    await page.locator('.sessions li[data-session="beta-plan"]').waitFor({ state: 'detached' });
    const { sessions } = await g.json<{ sessions: Array<{ id: string; parent_id: string | null }> }>(
      '/api/sessions',
    );
    expect(sessions.map((s) => s.id)).not.toContain('beta-plan');
    expect(sessions.filter((s) => s.parent_id === 'alpha-notes')).toHaveLength(1);
  });
});
