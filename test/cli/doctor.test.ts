import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Check } from '../../src/cli/commands/doctor.js';
import { useCliHarness } from '../support/cli-harness.js';
import { closedPort } from '../support/net.js';
import { ollamaRoutes, ollamaShowGemmaVision } from '../support/probe-fixtures.js';
import { reply, startScriptedServer } from '../support/scripted-server.js';

const cli = useCliHarness('doctor');

async function doctor(env: Record<string, string>, args: string[] = []) {
  const r = await cli.run(['doctor', '--json', ...args], { env });
  const report = JSON.parse(r.stdout) as { ok: boolean; checks: Check[] };
  return { code: r.code, report, check: (name: string) => report.checks.find((c) => c.name === name) };
}

describe('hearth doctor', () => {
  it('passes against a working server, with the sandbox and why it was chosen', async () => {
    const server = await cli.serve({
      models: ['qwen-test', 'nomic-embed-text'],
      turns: [reply().tool('get_weather', { city: 'Paris' })],
      extraRoutes: { 'GET /props': () => ({ json: { default_generation_settings: { n_ctx: 16384 } } }) },
    });
    const r = await doctor({ HEARTH_BASE_URL: server.baseUrl });
    expect(r.check('server')).toMatchObject({ ok: true, detail: expect.stringContaining(server.baseUrl) });
    expect(r.check('model')).toMatchObject({ ok: true, detail: 'qwen-test' });
    expect(r.check('context window')).toMatchObject({ ok: true, detail: expect.stringContaining('16384') });
    expect(r.check('tool calling')).toMatchObject({ ok: true, detail: expect.stringContaining('Paris') });
    expect(r.check('sandbox')).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/\((bwrap|none|docker|podman): /),
    });
    expect(r.check('database')).toMatchObject({ ok: true });
    expect(r.check('embeddings')).toMatchObject({ ok: true, detail: 'nomic-embed-text' });
    const configured = await doctor({ HEARTH_BASE_URL: server.baseUrl, HEARTH_EMBEDDING_MODEL: 'bge-m3' }, [
      '--no-live',
    ]);
    expect(configured.check('embeddings')).toMatchObject({
      ok: true,
      warning: true,
      detail: expect.stringContaining('bge-m3 (memory.embedding_model) is not among'),
      fix: expect.stringContaining('(nomic-embed-text)'),
    });
    // The identity depends on the machine; the check itself must be there either way.
    expect(r.check('git identity')).toBeDefined();
    if (r.report.checks.every((c) => c.ok)) expect(r.code).toBe(0);
    else expect(r.code).toBe(1);
  });

  it('lists every protection and limit, says which are not enforced, and what the config ignored', async () => {
    await mkdir(join(cli.workspace, '.hearth'));
    await writeFile(
      join(cli.workspace, '.hearth', 'config.json'),
      '{"sandbox": {"mode": "auto", "memory_mb": 1000}}',
    );
    await writeFile(join(cli.workspace, '.env'), 'HEARTH_PERMISSION_MODE=auto\n');
    const r = await doctor({ HEARTH_BASE_URL: `http://127.0.0.1:${await closedPort()}/v1` }, ['--no-live']);
    expect(r.check('config')).toMatchObject({
      ok: true,
      warning: true,
      detail: expect.stringMatching(
        /Ignored sandbox\.mode, sandbox\.memory_mb from .*Ignored HEARTH_PERMISSION_MODE from \.env/,
      ),
    });
    const names = r.report.checks.map((c) => c.name.trim());
    for (const name of [
      'filesystem',
      'network',
      'protected files',
      'process tree',
      'memory',
      'processes',
      'temp space',
    ]) {
      expect(names, name).toContain(name);
    }
    for (const check of r.report.checks.filter((c) => c.name.startsWith('  '))) {
      expect(check.ok).toBe(true);
      expect(check.detail).not.toBe('');
    }
  });

  it('says which context window an Ollama session will use, and that num_ctx carries it', async () => {
    const server = await cli.serve({
      models: ['gemma3:4b'],
      turns: [reply().tool('get_weather', { city: 'Paris' })],
      extraRoutes: ollamaRoutes({ 'gemma3:4b': ollamaShowGemmaVision }, { 'gemma3:4b': 16384 }),
    });
    const r = await doctor({ HEARTH_BASE_URL: server.baseUrl, HEARTH_MODEL: 'gemma3:4b' });
    expect(r.check('server')).toMatchObject({ ok: true, detail: expect.stringMatching(/^ollama at /) });
    expect(r.check('context window')?.detail).toBe(
      '16384 tokens, from Ollama /api/ps: loaded with context_length 16384; kept so the model is not reloaded, sent as num_ctx with every request',
    );
    // The live probe went through Ollama's own API with that very num_ctx.
    expect(server.requests.map((q) => [q.path, q.body.options?.num_ctx])).toEqual([['/api/chat', 16384]]);
  });

  it('fails with a fix when the server is down or the model will not call tools', async () => {
    const down = await doctor(
      { HEARTH_BASE_URL: `http://127.0.0.1:${await closedPort()}/v1`, HEARTH_MODEL: 'm' },
      ['--no-live'],
    );
    expect(down.code).toBe(1);
    expect(down.check('server')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('does not answer'),
    });

    const server = await cli.serve({
      models: ['chatty'],
      turns: [reply().text('It is sunny in Paris!')],
    });
    const missing = await doctor({ HEARTH_BASE_URL: server.baseUrl, HEARTH_MODEL: 'other' }, ['--no-live']);
    expect(missing.check('model')).toMatchObject({ ok: false, detail: expect.stringContaining('chatty') });
    const chatty = await doctor({ HEARTH_BASE_URL: server.baseUrl });
    expect(chatty.code).toBe(1);
    expect(chatty.check('embeddings')).toMatchObject({
      ok: true,
      warning: true,
      fix: expect.stringContaining('embed'),
    });
    expect(chatty.check('tool calling')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('without calling the tool'),
      fix: expect.stringContaining('--jinja'),
    });
  });

  it('reports a broken config file', async () => {
    await mkdir(join(cli.workspace, '.hearth'));
    await writeFile(join(cli.workspace, '.hearth', 'config.json'), '{"timeout": -1}');
    const r = await doctor({});
    expect(r.code).toBe(1);
    expect(r.check('config')).toMatchObject({ ok: false, detail: expect.stringContaining('timeout') });
  });
});

describe('hearth doctor with a pool of servers (llm.endpoints)', () => {
  it('lists each server with its tier and state, a dead one as a warning while another answers', async () => {
    // Not cli.serve: that one is handed to the CLI as HEARTH_BASE_URL, which wins over a pool.
    const server = await startScriptedServer({ models: ['m'] });
    onTestFinished(() => server.close());
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(
      join(cli.hearthHome, 'config.json'),
      JSON.stringify({
        model: 'm',
        llm: {
          endpoints: [
            { url: dead, priority: 1 },
            { url: server.baseUrl, priority: 2, tags: ['gpu'] },
          ],
        },
      }),
    );
    const r = await doctor({}, ['--no-live']);
    expect(r.check('server')).toMatchObject({ ok: true, detail: expect.stringContaining(server.baseUrl) });
    expect(r.check(`pool ${server.baseUrl}`)).toMatchObject({
      ok: true,
      warning: false,
      detail: expect.stringMatching(/^tier 2, up, m \[gpu\]/),
    });
    expect(r.check(`pool ${dead}`)).toMatchObject({
      ok: true,
      warning: true,
      detail: expect.stringMatching(/^tier 1, down: /),
    });
  });
});
