import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumMissing, useChromium } from '../support/browser.js';
import { useCliHarness } from '../support/cli-harness.js';
import { atPrompt } from '../support/pty.js';
import { reply } from '../support/scripted-server.js';
import { withDeadline } from '../support/wait.js';
import { loggedInPage, startServe } from './support.js';

/** Faults a user meets, through the installed bin: each reads well and loses nothing. */
describe('faults that read well, through the installed hearth', () => {
  const cli = useCliHarness('acc-faults');

  describe('a server that reads a long prompt before its first byte', () => {
    // An idle timeout of 1 s, a first byte after 3 s: within first_byte_timeout, which is what applies.
    const slowStart = { HEARTH_IDLE_TIMEOUT: '1', HEARTH_FIRST_BYTE_TIMEOUT: '120' };

    it('a one-shot run waits past the idle timeout for the first byte', async () => {
      await cli.serve([reply().delayFirstByte(3000).text('Read it all.')]);
      const r = await cli.run(['summarise the long file'], { env: slowStart });
      expect(r.stderr).not.toMatch(/sent nothing|Error/);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Read it all.');
    });

    it('the REPL says the server is reading the prompt while it waits', async () => {
      await cli.serve([reply().delayFirstByte(3000).text('Read it all.')]);
      const term = cli.terminal([], { env: slowStart });
      await term.waitFor(atPrompt);
      const since = term.screen.length;
      term.send('summarise the long file\r');
      await term.waitFor(/the model server is reading the prompt · [12]s/, undefined, since);
      await term.waitFor(/Read it all\./, undefined, since);
      await term.waitFor(atPrompt, undefined, since);
      expect(term.screen.slice(since)).not.toMatch(/sent nothing/);
    });

    it('gives up at first_byte_timeout and says the server may still be reading the prompt', async () => {
      await cli.serve([reply().hang()]);
      const r = await cli.run(['summarise the long file'], {
        env: { HEARTH_IDLE_TIMEOUT: '60', HEARTH_FIRST_BYTE_TIMEOUT: '1' },
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/no reply within 1s; it may still be reading a long prompt/);
    });
  });

  it('after a SIGKILL of hearth serve, a client says no gateway runs and a new serve takes over', async () => {
    await cli.serve([]);
    const gw = await startServe(cli);
    const file = join(cli.hearthHome, 'gateway.json');
    const { pid } = JSON.parse(await readFile(file, 'utf8')) as { pid: number };
    process.kill(pid, 'SIGKILL');
    await gw.run.result;
    const r = await cli.run(['attach']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/No gateway is running: .*has stopped/);
    expect(r.stderr).not.toMatch(/ECONNREFUSED|fetch failed|refused/i);
    // The stale file, which held the dead gateway's token, is gone.
    await expect(readFile(file, 'utf8')).rejects.toThrow(/ENOENT/);
    const next = await startServe(cli);
    const written = JSON.parse(await readFile(file, 'utf8')) as { pid: number; url: string };
    expect(written.url).toBe(next.url);
    expect(written.pid).not.toBe(pid);
  });

  it('a web client watching a session before it exists sees the turn another client starts', async () => {
    await cli.serve([reply().text('Seen by both.')]);
    const gw = await startServe(cli);
    const seen: { type: string }[] = [];
    let ended!: () => void;
    const done = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const watcher = await gw.socket('/ws/early-watch', (data) => {
      const message = JSON.parse(String(data)) as { type: string };
      seen.push(message);
      if (message.type === 'done') ended();
    });
    const driver = await gw.socket('/ws/early-watch');
    driver.send(JSON.stringify({ type: 'message', content: 'hello' }));
    await withDeadline(done, 'the watcher to see the turn end');
    expect(seen[0]).toMatchObject({ type: 'connected', exists: false });
    watcher.close();
    driver.close();
  });

  describe('a task larger than the model can take', () => {
    const small = { HEARTH_CONTEXT_WINDOW: '2048' };
    const huge = 'lorem ipsum dolor '.repeat(5000);

    it('a one-shot run refuses it with advice and sends nothing', async () => {
      await cli.serve([reply().text('Never.')]);
      const r = await cli.run([huge], { env: small });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/context window is 2,048 tokens, so it was not sent/);
      expect(cli.server.requests).toHaveLength(0);
    });

    it('the REPL refuses a paste with advice, sends nothing and keeps going', async () => {
      await cli.serve([reply().text('Small one answered.')]);
      const term = cli.terminal([], { env: small });
      await term.waitFor(atPrompt);
      const since = term.screen.length;
      term.send(`\x1b[200~${'lorem ipsum dolor '.repeat(1000)}\x1b[201~\r`);
      await term.waitFor(/so it was not sent/, undefined, since);
      await term.waitFor(atPrompt, undefined, since);
      expect(cli.server.requests).toHaveLength(0);
      term.send('a small one\r');
      await term.waitFor(/Small one answered\./, undefined, since);
    });
  });

  describe('a file named with a newline and an escape character', () => {
    const name = 'odd\n\x1b[2Jname.txt';
    const shown = 'odd\\n\\e[2Jname.txt';

    it('shows the name spelled out on one tool row in a one-shot run at a terminal', async () => {
      await writeFile(join(cli.workspace, name), 'inside\n');
      await cli.serve([reply().tool('read_file', { path: name }), reply().text('Read it.')]);
      const term = cli.terminal(['read the odd file']);
      expect(await term.exited).toBe(0);
      expect(term.screen).toContain(shown);
      expect(term.screen).not.toContain('\x1b[2J');
      expect(term.screen).not.toMatch(/odd\r?\n/);
    });
  });
});

if (chromiumMissing) console.warn(chromiumMissing);

describe.skipIf(chromiumMissing !== undefined)(`faults in the web UI (${CHROMIUM})`, () => {
  const cli = useCliHarness('acc-faults-web');
  const browser = useChromium();

  it('a tool row shows a control character in a file name spelled out', async () => {
    const name = 'odd\n\x1b[2Jname.txt';
    await writeFile(join(cli.workspace, name), 'inside\n');
    await cli.serve([reply().tool('read_file', { path: name }), reply().text('Read it.')]);
    const gw = await startServe(cli);
    const page = await loggedInPage(browser(), gw);
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await page.waitForURL(/#\/s\//);
    const box = page.getByLabel('Message');
    await box.fill('read the odd file');
    await box.press('Enter');
    const row = page.locator('.item.tool .label');
    await row.waitFor();
    expect(await row.textContent()).toContain('odd\\n\\e[2Jname.txt');
    await page.locator('.item.answer', { hasText: 'Read it.' }).waitFor();
  });
});
