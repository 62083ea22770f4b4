/**
 * `hearth models pull` against a local HTTP server serving a generated GGUF file: no internet.
 * Needs no node-llama-cpp (downloading is plain HTTP and files).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  listLocalModels,
  pullTarget,
  recordPull,
  removeLocalModel,
} from '../../../src/llm/embedded/model-dir.js';
import { type PullProgress, pullModel } from '../../../src/llm/embedded/model-pull.js';
import { type FileServer, startFileServer } from '../../support/file-server.js';
import { writeTinyLlamaGguf } from '../../support/tiny-gguf.js';

let dir: string;
let gguf: Buffer;
let sha: string;
let server: FileServer | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hearth-pull-'));
  writeTinyLlamaGguf(join(dir, 'source.gguf'));
  gguf = readFileSync(join(dir, 'source.gguf'));
  sha = createHash('sha256').update(gguf).digest('hex');
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const models = () => join(dir, 'models');

describe('pullModel', () => {
  it('downloads into the models folder, reports progress and checks the hub SHA-256', async () => {
    server = await startFileServer({ '/repo/resolve/main/tiny.gguf': gguf });
    const seen: PullProgress[] = [];
    const result = await pullModel(
      models(),
      { url: server.url('/repo/resolve/main/tiny.gguf'), file: 'tiny.gguf' },
      { onProgress: (p) => seen.push(p) },
    );
    expect(result).toEqual({
      ok: true,
      path: join(models(), 'tiny.gguf'),
      size: gguf.length,
      sha256: sha,
      verified: 'hub',
    });
    expect(readFileSync(join(models(), 'tiny.gguf')).equals(gguf)).toBe(true);
    expect(seen[0]).toEqual({ received: 0, total: gguf.length, resumedFrom: 0 });
    expect(seen.at(-1)).toEqual({ received: gguf.length, total: gguf.length, resumedFrom: 0 });
    expect(existsSync(join(models(), 'tiny.gguf.part'))).toBe(false);
  });

  it('resumes an interrupted pull with a Range request and verifies the whole file', async () => {
    server = await startFileServer({ '/tiny.gguf': gguf }, { cutAfter: { bytes: 100_000, times: 1 } });
    const request = { url: server.url('/tiny.gguf'), file: 'tiny.gguf' };
    const first = await pullModel(models(), request);
    expect(first.ok).toBe(false);
    if (first.ok) return;
    expect(first.error).toMatch(/run the same pull again to resume/);
    expect(existsSync(join(models(), 'tiny.gguf'))).toBe(false);
    const [partial] = await listLocalModels(models());
    expect(partial).toMatchObject({ file: 'tiny.gguf', partial: true, size: 100_000 });

    const seen: PullProgress[] = [];
    const second = await pullModel(models(), request, { onProgress: (p) => seen.push(p) });
    expect(second).toMatchObject({ ok: true, sha256: sha, size: gguf.length, verified: 'hub' });
    expect(server.ranges).toEqual([undefined, 'bytes=100000-']);
    expect(seen[0]).toEqual({ received: 100_000, total: gguf.length, resumedFrom: 100_000 });
    expect(readFileSync(join(models(), 'tiny.gguf')).equals(gguf)).toBe(true);
  });

  it('deletes a download whose checksum does not match, and keeps nothing under the final name', async () => {
    server = await startFileServer({ '/tiny.gguf': gguf });
    const wrong = 'ab'.repeat(32);
    const result = await pullModel(models(), {
      url: server.url('/tiny.gguf'),
      file: 'tiny.gguf',
      sha256: wrong,
    });
    expect(result).toEqual({
      ok: false,
      error: `The file from ${server.url('/tiny.gguf')} has SHA-256 ${sha}, not the expected ${wrong}: it was deleted. Check the URL (or --sha256) and pull again.`,
    });
    expect(await listLocalModels(models())).toEqual([]);
  });

  it('rejects a file the hub publishes another checksum for', async () => {
    server = await startFileServer({ '/tiny.gguf': gguf }, { etag: 'cd'.repeat(32) });
    const result = await pullModel(models(), { url: server.url('/tiny.gguf'), file: 'tiny.gguf' });
    expect(result.ok).toBe(false);
    expect(existsSync(join(models(), 'tiny.gguf'))).toBe(false);
  });

  it('says what the server answered for a missing file', async () => {
    server = await startFileServer({});
    const result = await pullModel(models(), { url: server.url('/nope.gguf'), file: 'nope.gguf' });
    expect(result).toEqual({ ok: false, error: `${server.url('/nope.gguf')} answered 404 Not Found.` });
  });
});

describe('the models folder', () => {
  it('names a pull by catalog name or URL, and refuses what is not a .gguf file', () => {
    expect(pullTarget('qwen2.5-coder-1.5b')).toMatchObject({ file: 'qwen2.5-coder-1.5b.gguf' });
    expect(pullTarget('https://hub.example/a/resolve/main/Small-Q4_K_M.gguf?download=true')).toEqual({
      url: 'https://hub.example/a/resolve/main/Small-Q4_K_M.gguf?download=true',
      file: 'Small-Q4_K_M.gguf',
      name: 'Small-Q4_K_M',
    });
    expect(pullTarget('https://hub.example/model.bin')).toMatchObject({
      error: expect.stringMatching(/\.gguf/),
    });
    expect(pullTarget('no-such-model')).toMatchObject({
      error: expect.stringContaining('neither a recommended model'),
    });
    expect(pullTarget('file:///etc/passwd.gguf')).toMatchObject({ error: expect.stringContaining('http') });
  });

  it('lists pulled models with their source and removes them', async () => {
    server = await startFileServer({ '/tiny.gguf': gguf });
    const url = server.url('/tiny.gguf');
    await pullModel(models(), { url, file: 'tiny.gguf' });
    await recordPull(models(), 'tiny.gguf', { url, sha256: sha, verified: 'hub', pulledAt: 'then' });
    expect(await listLocalModels(models())).toEqual([
      {
        file: 'tiny.gguf',
        path: join(models(), 'tiny.gguf'),
        size: gguf.length,
        partial: false,
        source: { url, sha256: sha, verified: 'hub', pulledAt: 'then' },
      },
    ]);
    expect(await removeLocalModel(models(), '../source')).toMatchObject({ error: expect.any(String) });
    expect(await removeLocalModel(models(), 'tiny')).toEqual([join(models(), 'tiny.gguf')]);
    expect(await listLocalModels(models())).toEqual([]);
    expect(await removeLocalModel(models(), 'tiny')).toMatchObject({
      error: expect.stringContaining('No model'),
    });
  });
});
