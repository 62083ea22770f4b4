/**
 * `hearth models pull|list|rm` as a user runs them, against a local server standing in for the
 * model hub (test/support/file-server.ts): no internet, no node-llama-cpp needed.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { type FileServer, startFileServer } from '../support/file-server.js';
import { writeTinyLlamaGguf } from '../support/tiny-gguf.js';

const cli = useCliHarness('models');
let hub: FileServer | undefined;
afterEach(async () => {
  await hub?.close();
  hub = undefined;
});

describe('hearth models', () => {
  it('pulls a .gguf URL into the models folder with progress and a checksum, lists it and removes it', async () => {
    const source = join(cli.workspace, 'tiny.gguf');
    writeTinyLlamaGguf(source);
    const bytes = readFileSync(source);
    const sha = createHash('sha256').update(bytes).digest('hex');
    hub = await startFileServer({ '/org/repo/resolve/main/Tiny-Q4.gguf': bytes });
    const saved = join(cli.hearthHome, 'models', 'Tiny-Q4.gguf');

    const pulled = await cli.run(['models', 'pull', hub.url('/org/repo/resolve/main/Tiny-Q4.gguf')]);
    expect(pulled.code).toBe(0);
    expect(pulled.stderr).toContain('Pulling Tiny-Q4.gguf: ');
    expect(pulled.stderr).toContain('(100%)');
    expect(pulled.stdout).toContain(`Saved ${saved} (`);
    expect(pulled.stdout).toContain(`SHA-256 ${sha} verified`);
    expect(pulled.stdout).toContain(`Run it with: hearth --model ${saved} "task"`);
    expect(readFileSync(saved).equals(bytes)).toBe(true);

    const listed = await cli.run(['models', 'list']);
    expect(listed.stdout).toContain(
      `Tiny-Q4.gguf  ${(bytes.length / 1e6).toFixed(1)} MB  sha256 ${sha}  from ${hub.url('/org/repo/resolve/main/Tiny-Q4.gguf')}`,
    );

    const removed = await cli.run(['models', 'rm', 'Tiny-Q4']);
    expect(removed.code).toBe(0);
    expect(existsSync(saved)).toBe(false);
    expect((await cli.run(['models', 'list'])).stdout).toContain('No models in');
  });

  it('lists the recommended models without downloading anything, and refuses what is not a model', async () => {
    const list = await cli.run(['models', 'pull', '--list']);
    expect(list.stdout).toMatch(/qwen2\.5-coder-1\.5b\s+Qwen2\.5 Coder 1\.5B/);
    expect(existsSync(join(cli.hearthHome, 'models'))).toBe(false);
    const wrong = await cli.run(['models', 'pull', 'not-a-model']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('"not-a-model" is neither a recommended model');
  });
});
