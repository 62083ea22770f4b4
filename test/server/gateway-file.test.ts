import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readGatewayFile, writeGatewayFile } from '../../src/server/state-file.js';

describe('the gateway file', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const content = { url: 'http://127.0.0.1:1', token: 't', version: '0', started_at: '2026-01-01T00:00:00Z' };

  it('names a running gateway as running', async () => {
    dir = await mkdtemp(join(tmpdir(), 'hearth-gwfile-'));
    const path = join(dir, 'gateway.json');
    await writeGatewayFile(path, { ...content, pid: process.pid });
    expect(await readGatewayFile(path)).toMatchObject({ state: 'running', file: { pid: process.pid } });
  });

  it('treats a file whose writer is dead as no gateway, and removes it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'hearth-gwfile-'));
    const path = join(dir, 'gateway.json');
    await writeGatewayFile(path, { ...content, pid: process.pid });
    // The same pid with another start time: the writer died and its pid went to another process.
    const written = JSON.parse(await readFile(path, 'utf8')) as { identity: string };
    const cut = written.identity.lastIndexOf('/');
    await writeFile(path, JSON.stringify({ ...written, identity: `${written.identity.slice(0, cut)}/1` }));
    expect(await readGatewayFile(path)).toEqual({ state: 'stopped', pid: process.pid });
    await expect(readFile(path, 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('says a missing file is absent and a foreign one invalid', async () => {
    dir = await mkdtemp(join(tmpdir(), 'hearth-gwfile-'));
    const path = join(dir, 'gateway.json');
    expect(await readGatewayFile(path)).toEqual({ state: 'absent' });
    await writeFile(path, '{"hello": 1}');
    expect(await readGatewayFile(path)).toEqual({ state: 'invalid' });
  });
});
