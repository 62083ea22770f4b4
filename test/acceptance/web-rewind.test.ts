import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumMissing, useChromium } from '../support/browser.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';
import { loggedInPage, startServe } from './support.js';

/**
 * The web UI's rewind of a turn, through the installed `hearth serve` in headless Chromium: what
 * would change shown first, a refusal when the user changed the file since, the rewind, its undo,
 * and the conversation before the turn as a new session.
 */
if (chromiumMissing) console.warn(chromiumMissing);

describe.skipIf(chromiumMissing !== undefined)(`rewind in the web UI (${CHROMIUM})`, () => {
  const cli = useCliHarness('acc-web-rewind');
  const browser = useChromium();
  const read = (file: string) => readFile(join(cli.workspace, file), 'utf8');
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: cli.workspace });

  it('shows the files a rewind changes, refuses over a user edit until asked, rewinds, undoes, and forks the chat', async () => {
    await writeFile(join(cli.workspace, 'a.txt'), 'one\n');
    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'start');
    await cli.serve([
      reply().tool('edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' }),
      reply().text('Edited.'),
    ]);
    expect((await cli.run(['--yolo', 'edit a please'])).code).toBe(0);
    expect(await read('a.txt')).toBe('two\n');
    const gw = await startServe(cli, ['--no-scheduler']);
    const { sessions } = await gw.json<{ sessions: { id: string }[] }>('/api/sessions');
    const id = sessions[0]!.id;

    const page = await loggedInPage(browser(), gw);
    await page.goto(`${gw.url}/#/s/${encodeURIComponent(id)}`);
    const turn = page.locator('.turns .turn');
    await turn.filter({ hasText: '1. edit a please' }).waitFor();

    // The user changes the file after the turn.
    await writeFile(join(cli.workspace, 'a.txt'), 'mine\n');
    await page.getByRole('button', { name: 'Rewind to before turn 1' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rewind to before turn 1' });
    await dialog.getByText('These files would change:').waitFor();
    expect(await dialog.locator('.changes').textContent()).toContain('a.txt restored');
    await dialog.getByRole('button', { name: 'Rewind', exact: true }).click();
    const refusal = dialog.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/changed since .* would be overwritten; nothing was changed/);
    expect(await dialog.locator('.changes').textContent()).toContain('a.txt');
    expect(await read('a.txt')).toBe('mine\n');

    await dialog.getByRole('button', { name: 'Overwrite them' }).click();
    await dialog.getByText('Files rewound: 1 file changed.').waitFor();
    expect(await read('a.txt')).toBe('one\n');
    await dialog.getByRole('button', { name: 'Undo rewind' }).click();
    await dialog.getByText(/Rewind undone: 1 file back as they were/).waitFor();
    expect(await read('a.txt')).toBe('mine\n');
    await dialog.getByRole('button', { name: 'Close' }).click();

    // The conversation only: a new session with what came before the turn; the files stay.
    await page.getByRole('button', { name: 'Rewind to before turn 1' }).click();
    await dialog.getByLabel('Conversation').check();
    await dialog.getByText('copied up to this turn into a new session').waitFor();
    await dialog.getByRole('button', { name: 'Rewind', exact: true }).click();
    await dialog.getByRole('link', { name: 'Open the conversation before turn 1' }).click();
    await page.waitForURL((url) => url.hash.startsWith('#/s/') && !url.hash.includes(id));
    const fork = decodeURIComponent(new URL(page.url()).hash.slice('#/s/'.length));
    const { parent_id } = await gw.json<{ parent_id: string }>(`/api/sessions/${encodeURIComponent(fork)}`);
    expect(parent_id).toBe(id);
    expect(await read('a.txt')).toBe('mine\n');
  });
});
