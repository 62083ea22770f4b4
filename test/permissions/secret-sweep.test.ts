import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('sweep');
beforeEach(async () => {
  await writeFile(join(cli.workspace, '.env'), 'API_TOKEN=sk-live-1234\n');
  await mkdir(join(cli.workspace, 'keys'));
  await writeFile(join(cli.workspace, 'keys', 'id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY----- API_TOKEN\n');
  await writeFile(join(cli.workspace, 'app.ts'), 'const token = process.env.API_TOKEN;\n');
});

async function sweep(call: ReturnType<typeof reply>, flags: string[] = []) {
  const server = await cli.serve([call, reply().text('done')]);
  const r = await cli.run(['--yolo', ...flags, 'look']);
  expect(r.code, r.stderr).toBe(0);
  return (server.requests[1]!.body.messages as ChatMessage[]).at(-1)!.content as string;
}

it('a broad grep leaves secret files out and says which, even in --yolo', async () => {
  const result = await sweep(reply().tool('grep', { pattern: 'API_TOKEN' }));
  expect(result).toContain('app.ts:1:const token = process.env.API_TOKEN;');
  expect(result).not.toContain('sk-live-1234');
  expect(result).not.toContain('BEGIN OPENSSH');
  expect(result).toContain('[Left out 2 files that may hold secrets: .env, keys/id_rsa.');
  expect(result).toContain("--allow 'grep(.env)'");
});

it('a rule that names a secret file lets grep read that one', async () => {
  const result = await sweep(reply().tool('grep', { pattern: 'API_TOKEN' }), ['--allow', 'grep(.env)']);
  expect(result).toContain('.env:1:API_TOKEN=sk-live-1234');
  expect(result).not.toContain('BEGIN OPENSSH');
  expect(result).toContain('[Left out 1 file that may hold secrets: keys/id_rsa.');
});

it('glob does not list secret files either, and says so', async () => {
  const result = await sweep(reply().tool('glob', { pattern: '**/*' }));
  expect(result).toContain('app.ts');
  expect(result).not.toMatch(/^\.env$/m);
  expect(result).not.toMatch(/^keys\/id_rsa$/m);
  expect(result).toContain('[Left out 2 files that may hold secrets');
});
