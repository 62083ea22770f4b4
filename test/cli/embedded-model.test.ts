/**
 * `hearth --model ./file.gguf "task"`: the whole CLI against a model it runs in process (the tiny
 * generated one), no server anywhere. Skips when node-llama-cpp is not installed.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Check } from '../../src/cli/commands/doctor.js';
import { importNodeLlamaCpp, isInstalled } from '../../src/llm/embedded/node-llama-cpp.js';
import { useCliHarness } from '../support/cli-harness.js';
import { writeTinyLlamaGguf } from '../support/tiny-gguf.js';

const lib = await importNodeLlamaCpp();
const installed = isInstalled(lib);
const cli = useCliHarness('embedded');
const noServer = { HEARTH_BASE_URL: undefined };

describe.skipIf(!installed)('hearth --model FILE.gguf', () => {
  it('runs a task with no server', async () => {
    writeTinyLlamaGguf(join(cli.workspace, 'tiny.gguf'));
    // Random weights rarely end a reply: a few tokens are enough to see one come back.
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(
      join(cli.hearthHome, 'config.yml'),
      'max_tokens: 8\ntemperature: 0\ntools:\n  enabled: [task_state]\n',
    );
    const r = await cli.run(['--model', './tiny.gguf', 'say hi'], { env: noServer });
    expect(r.stderr).not.toMatch(/error|cannot|no server/i);
    expect(r.code).toBe(0);
  });

  it('doctor names the runtime, its binary and threads, and the window from the file', async () => {
    writeTinyLlamaGguf(join(cli.workspace, 'tiny.gguf'));
    const r = await cli.run(['doctor', '--json', '--no-live', '--model', './tiny.gguf'], { env: noServer });
    const checks = (JSON.parse(r.stdout) as { checks: Check[] }).checks;
    const check = (name: string) => checks.find((c) => c.name === name);
    expect(check('embedded models')).toMatchObject({
      ok: true,
      detail: expect.stringMatching(
        /^node-llama-cpp, (CPU|CUDA|Metal|Vulkan) \((prebuilt|localBuild)\) binary, \d+ threads, RAM /,
      ),
    });
    expect(check('model')).toMatchObject({ ok: true, detail: join(cli.workspace, 'tiny.gguf') });
    expect(check('context window')).toMatchObject({
      ok: true,
      detail: expect.stringContaining('4096 tokens, from the GGUF metadata'),
    });
  });

  it('takes the file from a profile written as model: {file: PATH}', async () => {
    writeTinyLlamaGguf(join(cli.workspace, 'tiny.gguf'));
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(join(cli.hearthHome, 'config.yml'), 'models:\n  tiny:\n    model: {file: ./tiny.gguf}\n');
    const r = await cli.run(['doctor', '--json', '--no-live', '-m', 'tiny'], { env: noServer });
    const checks = (JSON.parse(r.stdout) as { checks: Check[] }).checks;
    expect(checks.find((c) => c.name === 'model')).toMatchObject({
      ok: true,
      detail: join(cli.workspace, 'tiny.gguf'),
    });
  });
});

describe.skipIf(installed)('hearth --model FILE.gguf', () => {
  it.skip(`skipped: ${'missing' in lib ? lib.missing : ''} (.ci/run installs it)`, () => {});
});

describe('hearth --model FILE.gguf, installed or not', () => {
  it('says which file is missing', async () => {
    const r = await cli.run(['--model', './missing.gguf', 'say hi'], { env: noServer });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`No model file at ${join(cli.workspace, 'missing.gguf')}`);
  });

  it.skipIf(installed)('says how to install node-llama-cpp when it is missing', async () => {
    writeTinyLlamaGguf(join(cli.workspace, 'tiny.gguf'));
    const r = await cli.run(['--model', './tiny.gguf', 'say hi'], { env: noServer });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      'node-llama-cpp is not installed: install it with `npm install node-llama-cpp@3.22.1`',
    );
  });
});
