import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, type FlagSetting, loadConfig } from '../../src/config/load.js';
import { trustProject } from '../../src/config/trust.js';

let root: string;
let userDir: string;
let workspace: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'hearth-config-'));
  userDir = join(root, 'home', '.hearth');
  workspace = join(root, 'ws');
  await mkdir(userDir, { recursive: true });
  await mkdir(join(workspace, '.hearth'), { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const userFile = (name = 'config.json') => join(userDir, name);
const workspaceFile = (name = 'config.json') => join(workspace, '.hearth', name);
const write = (path: string, value: unknown) =>
  writeFile(path, typeof value === 'string' ? value : JSON.stringify(value));
const load = (opts: { env?: Record<string, string>; flags?: FlagSetting[] } = {}) =>
  loadConfig({ workspace, userDir, env: opts.env ?? {}, flags: opts.flags });

async function loadError(opts: Parameters<typeof load>[0] = {}): Promise<string> {
  const err = await load(opts).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return (err as Error).message;
}

describe('precedence: defaults < user file < workspace file < .env < environment < flags', () => {
  const flag: FlagSetting = { key: 'timeout', value: 1100, name: '--timeout' };

  async function setAll() {
    await write(userFile(), { timeout: 700 });
    await write(workspaceFile(), { timeout: 800 });
    await writeFile(join(workspace, '.env'), 'HEARTH_TIMEOUT=900\n');
  }

  it('lets each layer win over every one before it, and says which did', async () => {
    await setAll();
    const env = { HEARTH_TIMEOUT: '1000' };
    const cases: Array<[Parameters<typeof load>[0], number, string]> = [
      [{ env, flags: [flag] }, 1100, '--timeout'],
      [{ env }, 1000, 'env HEARTH_TIMEOUT'],
      [{}, 900, '.env HEARTH_TIMEOUT'],
    ];
    for (const [opts, value, source] of cases) {
      const { config, sources } = await load(opts);
      expect(config.timeout).toBe(value);
      expect(sources.timeout).toBe(source);
    }
    await rm(join(workspace, '.env'));
    expect((await load()).sources.timeout).toBe(workspaceFile());
    expect((await load()).config.timeout).toBe(800);
    await rm(workspaceFile());
    expect((await load()).sources.timeout).toBe(userFile());
    expect((await load()).config.timeout).toBe(700);
    await rm(userFile());
    const { config, sources } = await load();
    expect(config.timeout).toBe(600);
    expect(sources.timeout).toBe('default');
  });

  it('keeps each key from the layer that set it last, key by key and inside nested objects', async () => {
    await write(userFile(), { model: 'user-model', sandbox: { mode: 'bwrap', network: true } });
    await write(workspaceFile(), { max_retries: 2, sandbox: 'none' });
    // Approved by the user: otherwise the project file could not set the sandbox (see below).
    await trustProject(userDir, workspaceFile());
    await writeFile(join(workspace, '.env'), 'HEARTH_TEMPERATURE=0.3\n');
    const { config, sources } = await load({
      env: { HEARTH_API_KEY: 'k' },
      flags: [{ key: 'max_iterations', value: 7, name: '--max-iterations' }],
    });
    expect(config).toMatchObject({
      model: 'user-model',
      max_retries: 2,
      temperature: 0.3,
      api_key: 'k',
      max_iterations: 7,
      sandbox: { mode: 'none', network: true },
    });
    expect(sources).toMatchObject({
      model: userFile(),
      max_retries: workspaceFile(),
      temperature: '.env HEARTH_TEMPERATURE',
      api_key: 'env HEARTH_API_KEY',
      max_iterations: '--max-iterations',
      'sandbox.mode': workspaceFile(),
      'sandbox.network': userFile(),
      'sandbox.env': 'default',
      idle_timeout: 'default',
    });
  });

  it('adds up permission rules from every source instead of dropping the earlier ones', async () => {
    await write(userFile(), { permissions: { deny: ['shell(rm *)'] } });
    await write(workspaceFile(), { permissions: { deny: ['shell(git push*)'], allow: ['shell(ls*)'] } });
    await trustProject(userDir, workspaceFile());
    const { config, sources } = await load({
      flags: [
        { key: 'permissions.allow', value: ['shell(npm test*)'], name: '--allow' },
        { key: 'permissions.mode', value: 'plan', name: '--permission-mode' },
        { key: 'permissions.mode', value: 'auto', name: '--yolo' },
      ],
    });
    expect(config.permissions).toEqual({
      mode: 'auto',
      allow: ['shell(ls*)', 'shell(npm test*)'],
      deny: ['shell(rm *)', 'shell(git push*)'],
    });
    expect(sources['permissions.deny']).toBe(`${userFile()} + ${workspaceFile()}`);
    expect(sources['permissions.allow']).toBe(`${workspaceFile()} + --allow`);
    expect(sources['permissions.mode']).toBe('--yolo');
  });

  it('takes no security setting from .env or an unapproved project file, and says which it ignored', async () => {
    await write(workspaceFile(), {
      timeout: 800,
      db_path: join(workspace, 'sessions.db'),
      sandbox: { mode: 'none', env: ['AWS_*'] },
      permissions: { mode: 'auto', allow: [], deny: ['shell(rm *)'] },
    });
    await writeFile(
      join(workspace, '.env'),
      'HEARTH_SANDBOX=none\nHEARTH_DB=/tmp/x.db\nHEARTH_TIMEOUT=900\n',
    );
    const { config, sources, ignored } = await load();
    expect(config).toMatchObject({ timeout: 900, sandbox: { mode: 'auto', env: [] } });
    expect(config.permissions).toEqual({ mode: 'normal', allow: [], deny: ['shell(rm *)'] });
    expect(config.db_path).toBeUndefined();
    expect(sources['permissions.deny']).toBe(workspaceFile());
    expect(ignored.map((i) => [i.key, i.source])).toEqual([
      ['db_path', workspaceFile()],
      ['sandbox.mode', workspaceFile()],
      ['sandbox.env', workspaceFile()],
      ['permissions.mode', workspaceFile()],
      ['sandbox.mode', '.env HEARTH_SANDBOX'],
      ['db_path', '.env HEARTH_DB'],
    ]);
  });

  it('keeps the gateway closed to the workspace: its address, token and origins come from the user only', async () => {
    await write(userFile(), { gateway: { port: 9000 } });
    await write(workspaceFile(), {
      gateway: { host: '0.0.0.0', token: 'project-chosen-token-123', origins: ['http://evil.example'] },
    });
    await writeFile(join(workspace, '.env'), 'HEARTH_GATEWAY_TOKEN=dotenv-chosen-token-1234\n');
    const { config, ignored } = await load();
    expect(config.gateway).toMatchObject({ host: '127.0.0.1', port: 9000, origins: [], pin: false });
    expect(config.gateway.token).toBeUndefined();
    expect(ignored.map((i) => [i.key, i.source])).toEqual([
      ['gateway.host', workspaceFile()],
      ['gateway.token', workspaceFile()],
      ['gateway.origins', workspaceFile()],
      ['gateway.token', '.env HEARTH_GATEWAY_TOKEN'],
    ]);
    const fromEnv = await load({ env: { HEARTH_GATEWAY_TOKEN: 'environment-token-123456' } });
    expect(fromEnv.config.gateway.token).toBe('environment-token-123456');
  });

  it('reads typed values from HEARTH_* variables and ignores other variables', async () => {
    const { config, sources } = await load({
      env: {
        HEARTH_NATIVE_TOOLS: 'false',
        HEARTH_SEED: '42',
        HEARTH_TOP_P: '0.9',
        HEARTH_SANDBOX: 'none',
        HEARTH_PERMISSION_MODE: 'manual',
        HEARTH_HOME: '/elsewhere',
        OPENAI_API_KEY: 'not-ours',
      },
    });
    expect(config).toMatchObject({ native_tools: false, seed: 42, top_p: 0.9 });
    expect(config.sandbox.mode).toBe('none');
    expect(config.permissions.mode).toBe('manual');
    expect(config.api_key).toBeUndefined();
    expect(sources['sandbox.mode']).toBe('env HEARTH_SANDBOX');
  });
});

describe('files', () => {
  it('reads YAML for the user file and the workspace file', async () => {
    await write(userFile('config.yaml'), 'timeout: 900\npermissions:\n  deny: ["shell(rm *)"]\n');
    await write(workspaceFile('config.yml'), '# project\nmodel: qwen\n');
    const { config, sources, files } = await load();
    expect(config.timeout).toBe(900);
    expect(config.permissions.deny).toEqual(['shell(rm *)']);
    expect(config.model).toBe('qwen');
    expect(sources.model).toBe(workspaceFile('config.yml'));
    expect(files.user).toMatchObject({ path: userFile('config.yaml'), exists: true });
  });

  it('refuses to guess when a folder holds both JSON and YAML', async () => {
    await write(workspaceFile(), {});
    await write(workspaceFile('config.yaml'), 'model: x\n');
    const message = await loadError();
    expect(message).toContain(workspaceFile());
    expect(message).toContain(workspaceFile('config.yaml'));
  });

  it('treats an empty file as no settings', async () => {
    await write(userFile('config.yaml'), '');
    await write(workspaceFile(), '  \n');
    expect((await load()).config.timeout).toBe(600);
  });

  it('names the file and the place of a syntax error', async () => {
    await write(workspaceFile(), '{\n  "model": "x",\n}\n');
    expect(await loadError()).toMatch(
      new RegExp(`^${workspaceFile()} is not valid JSON \\(line 3, column 1\\)`),
    );
    await rm(workspaceFile());
    await write(userFile('config.yaml'), 'model: [unclosed\n');
    expect(await loadError()).toMatch(/config\.yaml is not valid YAML/);
  });

  it('wants an object of settings at the top of a file', async () => {
    await write(workspaceFile(), '["model"]');
    expect(await loadError()).toContain(`Invalid configuration in ${workspaceFile()}: expected an object`);
  });
});

describe('.env in the workspace', () => {
  it('uses only HEARTH_* settings from it, and real variables win over it', async () => {
    await writeFile(
      join(workspace, '.env'),
      [
        '# local settings',
        'export HEARTH_MODEL="qwen 7b" # quoted, with a comment',
        "HEARTH_API_KEY='sk-#not-a-comment'",
        'HEARTH_TIMEOUT=1200   # seconds',
        'DATABASE_URL=postgres://secret',
      ].join('\n'),
    );
    const { config, sources } = await load({ env: { HEARTH_TIMEOUT: '30' } });
    expect(config.model).toBe('qwen 7b');
    expect(config.api_key).toBe('sk-#not-a-comment');
    expect(config.timeout).toBe(30);
    expect(sources.model).toBe('.env HEARTH_MODEL');
    expect(sources.timeout).toBe('env HEARTH_TIMEOUT');
    expect(process.env.HEARTH_MODEL).toBeUndefined();
  });

  it('names the .env file and the variable when a value is wrong', async () => {
    await writeFile(join(workspace, '.env'), 'HEARTH_TIMEOUT=soon\n');
    expect(await loadError()).toBe(
      `Invalid configuration in ${join(workspace, '.env')}: HEARTH_TIMEOUT: expected a number (got "soon")`,
    );
  });
});

describe('error messages name the source and the key', () => {
  it('says what a value should be', async () => {
    await write(workspaceFile(), { timeout: -1 });
    expect(await loadError()).toBe(
      `Invalid configuration in ${workspaceFile()}: timeout: expected a positive number (got -1)`,
    );
  });

  it('suggests the closest known key for an unknown one, at any depth', async () => {
    await write(userFile(), {
      max_iteration: 5,
      baseUrl: 'http://x/v1',
      permissions: { alow: [] },
      models: { c: { model: 'm', temp: 1 } },
      frobnicate: true,
      mcpServers: { everything: { command: 'npx' } },
    });
    const message = await loadError();
    expect(message.split('\n')[0]).toBe(`Invalid configuration in ${userFile()}:`);
    expect(message).toContain('unknown key "max_iteration" (did you mean max_iterations?)');
    expect(message).toContain('unknown key "baseUrl" (did you mean base_url?)');
    expect(message).toContain('unknown key "permissions.alow" (did you mean permissions.allow?)');
    expect(message).toContain('unknown key "models.c.temp" (did you mean models.c.temperature?)');
    expect(message).toMatch(/unknown key "frobnicate"$/m);
    // Pasted from another agent's file (Claude Desktop, Cursor): where it goes here.
    expect(message).toContain(
      'unknown key "mcpServers" (MCP servers go under mcp.servers here, or in ~/.hearth/mcp.json',
    );
  });

  it('lists the choices for a wrong name and suggests the near one', async () => {
    await write(workspaceFile(), { sandbox: 'bwarp', permissions: { mode: 'yolo' } });
    const message = await loadError();
    expect(message).toContain(
      'sandbox: expected one of auto, bwrap, docker, podman, seatbelt, none (got "bwarp"; did you mean bwrap?)',
    );
    expect(message).toContain('permissions.mode: expected one of auto, normal, manual, plan (got "yolo")');
  });

  it('explains the object form of a setting that also takes a name', async () => {
    await write(workspaceFile(), { sandbox: { mode: 'bwrap', netwrk: true } });
    expect(await loadError()).toContain('unknown key "sandbox.netwrk" (did you mean sandbox.network?)');
  });

  it('names environment variables and flags rather than keys', async () => {
    expect(await loadError({ env: { HEARTH_MAX_ITERATIONS: '2.5' } })).toBe(
      'Invalid configuration in the environment: HEARTH_MAX_ITERATIONS: expected a whole number (got 2.5)',
    );
    expect(await loadError({ flags: [{ key: 'base_url', value: 'localhost', name: '--base-url' }] })).toBe(
      'Invalid configuration in the command line: --base-url: expected a URL starting with http:// or https://, e.g. http://127.0.0.1:1234/v1 (got "localhost")',
    );
    expect(await loadError({ env: { HEARTH_DATABASE_URL: 'http://db:5432/hearth' } })).toBe(
      'Invalid configuration in the environment: HEARTH_DATABASE_URL: expected a URL such as postgres://user@host:5432/hearth (got "http://db:5432/hearth")',
    );
  });
});

describe('model profiles', () => {
  const profiles = {
    base_url: 'http://127.0.0.1:1/v1',
    temperature: 0.7,
    models: {
      coder: { model: 'qwen2.5-coder-14b', base_url: 'http://127.0.0.1:8080/v1', temperature: 0.2, seed: 7 },
      small: { model: 'qwen2.5-3b', native_tools: false, max_tokens: 512 },
    },
  };
  const pick = (name: string): FlagSetting => ({ key: 'model', value: name, name: '--model' });

  it('applies the profile named by -m over the top-level keys', async () => {
    await write(userFile(), profiles);
    const { config, sources, profile } = await load({ flags: [pick('coder')] });
    expect(config).toMatchObject({
      model: 'qwen2.5-coder-14b',
      base_url: 'http://127.0.0.1:8080/v1',
      temperature: 0.2,
      seed: 7,
    });
    expect(profile).toEqual({ name: 'coder', selectedBy: '--model' });
    expect(sources.model).toBe(`profile coder, ${userFile()}`);
    expect(sources.seed).toBe(`profile coder, ${userFile()}`);

    const small = await load({ flags: [pick('small')] });
    expect(small.config).toMatchObject({
      model: 'qwen2.5-3b',
      base_url: 'http://127.0.0.1:1/v1',
      temperature: 0.7,
      native_tools: false,
      max_tokens: 512,
    });
    expect(small.sources.base_url).toBe(userFile());
  });

  it('treats a name that is not a profile as a model name', async () => {
    await write(userFile(), profiles);
    const { config, profile, sources } = await load({ flags: [pick('llama3.1:8b')] });
    expect(config.model).toBe('llama3.1:8b');
    expect(config.base_url).toBe('http://127.0.0.1:1/v1');
    expect(profile).toBeUndefined();
    expect(sources.model).toBe('--model');
  });

  it('lets variables and flags still win over the fields of a profile', async () => {
    await write(userFile(), profiles);
    const { config, sources } = await load({
      env: { HEARTH_TEMPERATURE: '1.1' },
      flags: [pick('coder'), { key: 'base_url', value: 'http://127.0.0.1:2/v1', name: '--base-url' }],
    });
    expect(config).toMatchObject({
      model: 'qwen2.5-coder-14b',
      temperature: 1.1,
      base_url: 'http://127.0.0.1:2/v1',
    });
    expect(sources.temperature).toBe('env HEARTH_TEMPERATURE');
  });

  it('selects a profile named by a file or a variable too', async () => {
    await write(userFile(), profiles);
    await write(workspaceFile(), { model: 'small' });
    const fromFile = await load();
    expect(fromFile.config.model).toBe('qwen2.5-3b');
    expect(fromFile.profile).toEqual({ name: 'small', selectedBy: workspaceFile() });
    const fromEnv = await load({ env: { HEARTH_MODEL: 'coder' } });
    expect(fromEnv.config.model).toBe('qwen2.5-coder-14b');
    expect(fromEnv.profile).toEqual({ name: 'coder', selectedBy: 'env HEARTH_MODEL' });
  });

  it('lets a workspace tune a profile defined by the user', async () => {
    await write(userFile(), profiles);
    await write(workspaceFile(), { models: { coder: { temperature: 0 } } });
    const { config, sources } = await load({ flags: [pick('coder')] });
    expect(config).toMatchObject({ model: 'qwen2.5-coder-14b', temperature: 0, seed: 7 });
    expect(sources.temperature).toBe(`profile coder, ${workspaceFile()}`);
  });

  it('reads a GGUF file written as model: {file: PATH}, at the top or in a profile, as its path', async () => {
    await write(userFile(), {
      model: { file: '~/models/a.gguf' },
      models: { tiny: { model: { file: './t.gguf' } } },
    });
    expect((await load()).config.model).toBe('~/models/a.gguf');
    const { config, profile } = await load({ flags: [pick('tiny')] });
    expect(config.model).toBe('./t.gguf');
    expect(profile).toEqual({ name: 'tiny', selectedBy: '--model' });
  });

  it('wants a .gguf path in model: {file: PATH}', async () => {
    await write(userFile(), { model: { file: './weights.bin' } });
    expect(await loadError()).toContain('expected the path of a GGUF model file, ending in .gguf');
  });

  it('names the file of a profile that has no model', async () => {
    await write(workspaceFile(), { models: { fast: { temperature: 0.1 } } });
    expect(await loadError()).toBe(
      `Invalid configuration in ${workspaceFile()}: models.fast.model: missing (required)`,
    );
  });
});
