import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chromiumMissing, useChromium } from '../support/browser.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';
import { loggedInPage, startServe } from './support.js';

/** LAO's projects registry through the installed bin: `hearth projects`, `--project`, `/project`, the web UI. */
const cli = useCliHarness('acc-projects');

/** A project folder with a profile for it in the user's config; registered as "api" with its defaults. */
async function registerApi(): Promise<string> {
  const dir = join(await cli.tempDir('proj'), 'api');
  await mkdir(dir);
  await mkdir(cli.hearthHome, { recursive: true });
  await writeFile(
    join(cli.hearthHome, 'config.json'),
    JSON.stringify({ models: { fast: { model: 'other-model' } }, memory: { reflect: 'off' } }),
  );
  const added = await cli.run(['projects', 'add', dir, '--model', 'fast', '--set', 'pipeline.max_rework=1']);
  expect(added.stderr).toBe('');
  expect(added.stdout).toContain(`Added project api: ${dir}`);
  return dir;
}

const models = ['chat-model', 'other-model'];

describe('projects', () => {
  it('adds, lists, uses and removes projects; --project runs in one with its defaults', async () => {
    await cli.serve({ models, turns: [reply().text('Done in the project.'), reply().text('Done again.')] });
    const dir = await registerApi();

    // A second folder under the same name is refused, and the registry is unchanged.
    const twice = await cli.run(['projects', 'add', cli.workspace, '--name', 'api']);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('A project named "api" exists already');
    const badSet = await cli.run(['projects', 'add', cli.workspace, '--set', 'sandbox=none']);
    expect(badSet.code).toBe(1);
    expect(badSet.stderr).toContain('pipeline.KEY=VALUE');

    const listed = JSON.parse((await cli.run(['projects', 'list', '--json'])).stdout) as {
      projects: Array<{ name: string; path: string; last_used: boolean; defaults: unknown }>;
    };
    expect(listed.projects).toEqual([
      expect.objectContaining({
        name: 'api',
        path: dir,
        last_used: false,
        defaults: { model: 'fast', pipeline: { max_rework: 1 } },
      }),
    ]);

    const used = await cli.run(['projects', 'use', 'api']);
    expect(used.stdout).toContain(dir);
    expect((await cli.run(['projects'])).stdout).toMatch(/^\* api {2}/m);

    // --project alone: the last used. The run works in its folder, with its profile's model.
    const run = await cli.run(['--project', '--json', 'what is here?']);
    expect(run.code).toBe(0);
    const session = JSON.parse(run.stdout.split('\n')[0]!) as { type: string; workspace?: string };
    expect(session.type).toBe('session');
    expect(cli.server.requests[0]!.body.model).toBe('other-model');
    // A task right after --project is taken for its name: the error says how to give both.
    const swallowed = await cli.run(['--project', 'what is here?']);
    expect(swallowed.code).toBe(1);
    expect(swallowed.stderr).toContain('No project named "what is here?"');
    expect(swallowed.stderr).toContain('hearth --project -- "what is here?"');
    const dashed = await cli.run(['--project', '--', 'what is here?']);
    expect(dashed.code).toBe(0);
    const shown = await cli.run(['--project', 'api', 'config', 'show']);
    expect(shown.stdout).toMatch(/max_rework.*1.*project api/);

    const both = await cli.run(['--project', 'api', '-C', cli.workspace, 'config', 'show']);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('--project and -C/--workspace both choose the folder');

    expect((await cli.run(['projects', 'rm', 'api'])).stdout).toContain('Removed project api');
    const gone = await cli.run(['--project', 'api', 'config', 'show']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('No projects registered yet');
  });

  it('/project in the REPL lists the projects and switches the next task to one, with its model', async () => {
    const dir = await registerApi();
    const term = await cli.repl({ models, turns: [reply().text('Here.'), reply().text('There.')] });
    await term.enter('first');
    expect(cli.server.requests[0]!.body.model).toBe('chat-model');
    const list = await term.enter('/project');
    expect(list).toContain('api');
    expect(list).toContain(dir);
    const switched = await term.enter('/project api');
    expect(switched).toMatch(/Now in project api: .*api · model other-model/);
    await term.enter('second');
    expect(cli.server.requests[1]!.body.model).toBe('other-model');
    term.send('/exit\r');
    expect(await term.exited).toBe(0);
    // The second task's session belongs to the project's folder, not the one the REPL started in.
    const id = /session ([0-9a-f]+) · continue with/.exec(term.screen)![1]!;
    expect((await cli.run(['--project', 'api', 'sessions'])).stdout).toContain(id);
    expect((await cli.run(['sessions'])).stdout).not.toContain(id);
  });
});

describe.skipIf(chromiumMissing !== undefined)('projects in the web UI', () => {
  const browser = useChromium();

  it('lists the projects (GET /api/projects) and starts a new session in the one chosen', async () => {
    const dir = await registerApi();
    await cli.serve({ models, turns: [reply().text('Hello from the project.')] });
    const gw = await startServe(cli);
    const { projects } = await gw.json<{ projects: Array<{ name: string; path: string; model: string }> }>(
      '/api/projects',
    );
    expect(projects).toEqual([{ name: 'api', path: dir, model: 'fast', last_used: false }]);

    const page = await loggedInPage(browser(), gw);
    await page.getByLabel('Project').selectOption({ label: 'api · fast' });
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await page.waitForURL(/#\/s\//);
    const box = page.getByLabel('Message');
    await box.fill('Say hello');
    await box.press('Enter');
    await page.locator('.item.answer', { hasText: 'Hello from the project.' }).waitFor();
    const { sessions } = await gw.json<{ sessions: Array<{ workspace: string }> }>('/api/sessions');
    expect(sessions.map((s) => s.workspace)).toEqual([dir]);
    // The session ran with the project's profile.
    expect(cli.server.requests[0]!.body.model).toBe('other-model');
  });
});
