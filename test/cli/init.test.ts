import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';

const cli = useCliHarness('init');

const configPath = () => join(cli.workspace, '.hearth', 'config.json');
const readConfig = async () => JSON.parse(await readFile(configPath(), 'utf8')) as Record<string, unknown>;

describe('hearth init --yes', () => {
  it('writes the config with the server and model found, and an AGENTS.md template', async () => {
    const server = await cli.serve({ models: ['text-embedding-x', 'qwen-test'] });
    await writeFile(
      join(cli.workspace, 'package.json'),
      JSON.stringify({ name: 'demo-app', scripts: { build: 'tsc', test: 'vitest' } }),
    );
    const r = await cli.run(['init', '--yes'], { env: { HEARTH_BASE_URL: server.baseUrl } });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(await readConfig()).toEqual({
      base_url: server.baseUrl,
      model: 'qwen-test',
      permissions: { allow: [], deny: [] },
    });
    const notes = await readFile(join(cli.workspace, 'AGENTS.md'), 'utf8');
    expect(notes).toMatch(/^# demo-app\n/);
    expect(notes).toContain('- Build: `npm run build`');
    expect(notes).toContain('- Test: `npm test`');
    expect(notes).toMatch(/## Do not touch/);
    expect(r.stdout).toContain(`Created ${configPath()}`);
    expect(r.stdout).toContain(`Created ${join(cli.workspace, 'AGENTS.md')}`);

    // The new file is a valid config that Hearth reads back.
    const show = await cli.run(['config', 'show', '--json']);
    expect(JSON.parse(show.stdout).sources.model).toBe(configPath());
  });

  it('keeps a configured server that does not answer now, leaving the model to be found', async () => {
    const r = await cli.run(['init', '--yes', '-C', join(cli.workspace, 'fresh')], {
      cwd: cli.home,
      env: { HEARTH_BASE_URL: 'http://127.0.0.1:9/v1' },
    });
    expect(r.code).toBe(0);
    const config = JSON.parse(await readFile(join(cli.workspace, 'fresh', '.hearth', 'config.json'), 'utf8'));
    // The URL the user configured is kept even though nothing answers there now.
    expect(config).toEqual({ base_url: 'http://127.0.0.1:9/v1', permissions: { allow: [], deny: [] } });
    expect(await readFile(join(cli.workspace, 'fresh', 'AGENTS.md'), 'utf8')).toContain('TODO: the command');
  });

  it('never overwrites an existing config or AGENTS.md, and says so', async () => {
    await mkdir(join(cli.workspace, '.hearth'));
    await writeFile(configPath(), '{"model": "mine"}\n');
    const first = await cli.run(['init', '--yes']);
    expect(first.code).toBe(0);
    expect(await readFile(configPath(), 'utf8')).toBe('{"model": "mine"}\n');
    expect(first.stdout).toContain(`${configPath()} exists; left as it is`);
    expect(first.stdout).toContain(`Created ${join(cli.workspace, 'AGENTS.md')}`);

    await writeFile(join(cli.workspace, 'AGENTS.md'), 'my notes\n');
    const second = await cli.run(['init', '--yes']);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/^Nothing to do: .* exist already\./);
    expect(await readFile(join(cli.workspace, 'AGENTS.md'), 'utf8')).toBe('my notes\n');
    expect(await readFile(configPath(), 'utf8')).toBe('{"model": "mine"}\n');
  });

  it('without a terminal asks nothing, as with --yes', async () => {
    const r = await cli.run(['init'], {
      env: { HEARTH_BASE_URL: 'http://127.0.0.1:9/v1', HEARTH_MODEL: 'm' },
      stdin: '',
    });
    expect(r.code).toBe(0);
    expect(await readConfig()).toMatchObject({ base_url: 'http://127.0.0.1:9/v1', model: 'm' });
  });
});

describe('hearth init at a terminal', () => {
  it('asks for the server, the model and the test command, offering what it found', async () => {
    const server = await cli.serve({ models: ['qwen-test', 'llama-other'] });
    await writeFile(join(cli.workspace, 'Makefile'), 'all:\n\ttrue\ntest:\n\ttrue\n');
    const term = cli.terminal(['init']);
    await term.waitFor(/Model server URL.*\[http:\/\/127\.0\.0\.1:\d+\/v1\]: /);
    term.send('\r');
    await term.waitFor(/Models there: qwen-test, llama-other[\s\S]*Model \[qwen-test\]: /);
    term.send('llama-other\r');
    await term.waitFor(/Command that runs the tests.*\[make test\]: /);
    term.send('make check\r');
    expect(await term.exited).toBe(0);
    expect(await readConfig()).toMatchObject({ base_url: server.baseUrl, model: 'llama-other' });
    const notes = await readFile(join(cli.workspace, 'AGENTS.md'), 'utf8');
    expect(notes).toContain('- Build: `make`');
    expect(notes).toContain('- Test: `make check`');
  });
});
