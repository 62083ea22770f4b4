import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { writeTinyLlamaGguf } from '../support/tiny-gguf.js';

/**
 * The embedded model with node-llama-cpp installed beside the installed Hearth (`npm i -g
 * node-llama-cpp@3.22.1` next to a global install, as the README says). The install set-up puts it
 * in the prefix when the checkout has it (.ci/run adds it); CI must run these.
 */
const prefix = inject('hearthPrefix');
const installed = prefix !== undefined && existsSync(join(prefix, 'lib', 'node_modules', 'node-llama-cpp'));
if (!installed && process.env.CI === 'true')
  throw new Error('CI must run the embedded-model acceptance tests: .ci/run installs node-llama-cpp');
if (!installed)
  console.warn('node-llama-cpp is not installed (npm install --no-save node-llama-cpp@3.22.1): skipped');

describe.skipIf(!installed)('the installed hearth with node-llama-cpp beside it', () => {
  const cli = useCliHarness('acc-embedded');
  const noServer = { HEARTH_BASE_URL: undefined };

  it('runs a task on a GGUF file in process, with no server, and doctor names the runtime', async () => {
    writeTinyLlamaGguf(join(cli.workspace, 'tiny.gguf'));
    await mkdir(cli.hearthHome, { recursive: true });
    // Random weights rarely end a reply: a few tokens are enough to see one come back.
    await writeFile(
      join(cli.hearthHome, 'config.yml'),
      'max_tokens: 8\ntemperature: 0\ntools:\n  enabled: [task_state]\n',
    );
    const r = await cli.run(['--model', './tiny.gguf', 'say hi'], { env: noServer });
    expect(r.stderr).not.toMatch(/error|cannot|not installed|no server/i);
    expect(r.code).toBe(0);

    const doctor = await cli.run(['doctor', '--json', '--no-live', '--model', './tiny.gguf'], {
      env: noServer,
    });
    const checks = (JSON.parse(doctor.stdout) as { checks: { name: string; ok: boolean; detail: string }[] })
      .checks;
    expect(checks.find((c) => c.name === 'embedded models')).toMatchObject({
      ok: true,
      detail: expect.stringMatching(
        /^node-llama-cpp, (CPU|CUDA|Metal|Vulkan) \((prebuilt|localBuild)\) binary/,
      ),
    });
  });
});
