import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';

const cli = useCliHarness('cfg');
beforeEach(async () => {
  await mkdir(cli.hearthHome, { recursive: true });
  await mkdir(join(cli.workspace, '.hearth'));
});

/** The `key = value   (source)` lines of `config show`, as a map from key to [value, source]. */
function parseShow(stdout: string): Map<string, [string, string]> {
  const rows = new Map<string, [string, string]>();
  for (const line of stdout.split('\n')) {
    const match = /^(\S+) = (.*?)\s+\((.*)\)$/.exec(line);
    if (match) rows.set(match[1]!, [match[2]!, match[3]!]);
  }
  return rows;
}

describe('hearth config show', () => {
  it('prints each setting with where it came from, across all six layers', async () => {
    await writeFile(
      join(cli.hearthHome, 'config.yaml'),
      'timeout: 700\nidle_timeout: 100\nmodels:\n  coder:\n    model: qwen2.5-coder-14b\n    temperature: 0.2\n',
    );
    await writeFile(join(cli.workspace, '.hearth', 'config.json'), '{"timeout": 800, "max_retries": 2}');
    await writeFile(
      join(cli.workspace, '.env'),
      'HEARTH_TIMEOUT=900\nHEARTH_API_KEY="sk-verysecretvalue123"\n',
    );
    const r = await cli.run(['config', 'show', '-m', 'coder', '--max-iterations', '9'], {
      env: { HEARTH_TIMEOUT: '1000', HEARTH_SEED: '5' },
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const rows = parseShow(r.stdout);
    expect(rows.get('timeout')).toEqual(['1000', 'env HEARTH_TIMEOUT']);
    expect(rows.get('idle_timeout')).toEqual(['100', join(cli.hearthHome, 'config.yaml')]);
    expect(rows.get('max_retries')).toEqual(['2', join(cli.workspace, '.hearth', 'config.json')]);
    expect(rows.get('max_iterations')).toEqual(['9', '--max-iterations']);
    expect(rows.get('seed')).toEqual(['5', 'env HEARTH_SEED']);
    expect(rows.get('model')).toEqual([
      'qwen2.5-coder-14b',
      `profile coder, ${join(cli.hearthHome, 'config.yaml')}`,
    ]);
    expect(rows.get('temperature')?.[0]).toBe('0.2');
    expect(rows.get('compaction.threshold')).toEqual(['0.75', 'default']);
    expect(rows.get('permissions.mode')).toEqual(['normal', 'default']);
    expect(r.stdout).toMatch(/^# profile coder \(selected by --model\)$/m);
    // The key is masked: the output is meant to be pasted into bug reports.
    expect(rows.get('api_key')?.[1]).toBe('.env HEARTH_API_KEY');
    expect(r.stdout).not.toContain('verysecret');
  });

  it('prints JSON for machines, with the key masked there too', async () => {
    await writeFile(join(cli.workspace, '.hearth', 'config.json'), '{"api_key": "sk-verysecretvalue123"}');
    const r = await cli.run(['config', 'show', '--json', '--yolo']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as {
      config: Record<string, unknown> & { permissions: { mode: string } };
      sources: Record<string, string>;
      profile: unknown;
    };
    expect(out.config.permissions.mode).toBe('auto');
    expect(out.sources['permissions.mode']).toBe('--yolo');
    expect(out.sources.timeout).toBe('default');
    expect(out.config.timeout).toBe(600);
    expect(out.profile).toBeNull();
    expect(r.stdout).not.toContain('verysecret');
  });

  it('says which setting is not set yet and how it will be found', async () => {
    const r = await cli.run(['config', 'show']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^base_url = \(not set\)\s+\(found at run time/m);
  });

  it('fails with the file and the key named, and a suggestion', async () => {
    await writeFile(join(cli.workspace, '.hearth', 'config.json'), '{"max_iteration": 5}');
    const r = await cli.run(['config', 'show']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `hearth: Invalid configuration in ${join(cli.workspace, '.hearth', 'config.json')}: unknown key "max_iteration" (did you mean max_iterations?)\n`,
    );
  });

  it('stops the main command on a bad value too', async () => {
    const r = await cli.run(['do something'], { env: { HEARTH_TIMEOUT: '-1' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'Invalid configuration in the environment: HEARTH_TIMEOUT: expected a positive number (got -1)',
    );
  });
});

describe('hearth config path', () => {
  it('prints the user and workspace files and whether each exists', async () => {
    await writeFile(join(cli.hearthHome, 'config.yml'), 'timeout: 700\n');
    const r = await cli.run(['config', 'path', '-C', cli.workspace], { cwd: cli.home });
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^user\\s+${join(cli.hearthHome, 'config.yml')}\\s+exists$`));
    expect(lines[1]).toMatch(
      new RegExp(`^workspace\\s+${join(cli.workspace, '.hearth', 'config.json')}\\s+not found$`),
    );
    expect(lines[2]).toMatch(new RegExp(`^\\.env\\s+${join(cli.workspace, '.env')}\\s+not found$`));
  });

  it('flags two config files in one place, and prints JSON on request', async () => {
    await writeFile(join(cli.workspace, '.hearth', 'config.json'), '{}');
    await writeFile(join(cli.workspace, '.hearth', 'config.yaml'), '');
    const text = await cli.run(['config', 'path']);
    expect(text.stdout).toContain(`also ${join(cli.workspace, '.hearth', 'config.yaml')}: keep only one`);
    const json = await cli.run(['config', 'path', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({
      user: { path: join(cli.hearthHome, 'config.json'), exists: false },
      workspace: { path: join(cli.workspace, '.hearth', 'config.json'), exists: true },
      '.env': { path: join(cli.workspace, '.env'), exists: false },
    });
  });
});
