import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Agent } from '../../src/index.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

let server: ScriptedServer | undefined;
let dir: string;
let workspace: string;
let made: Agent | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-lib-rw-'));
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-lib-rw-ws-')));
});
afterEach(async () => {
  await made?.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(workspace, { recursive: true, force: true });
});

it('the library lists turns, rewinds the files to before one, undoes that, and forks the conversation', async () => {
  await writeFile(join(workspace, 'a.txt'), 'one\n');
  server = await startScriptedServer({
    turns: [reply().tool('write_file', { path: 'a.txt', content: 'two\n' }), reply().text('Written.')],
  });
  made = new Agent({
    baseUrl: server.baseUrl,
    workspace,
    dbPath: join(dir, 'hearth.db'),
    home: dir,
    permissionMode: 'auto',
    sandbox: 'none',
  });
  await made.run('write two');
  expect(await readFile(join(workspace, 'a.txt'), 'utf8')).toBe('two\n');
  expect(await made.turns()).toEqual([
    expect.objectContaining({ number: 1, label: 'write two', changedFiles: true }),
  ]);
  const plan = await made.rewindFiles(1);
  expect(plan?.changes).toEqual([{ path: 'a.txt', status: 'modified' }]);
  expect(await readFile(join(workspace, 'a.txt'), 'utf8')).toBe('one\n');
  await made.rewindFiles('undo');
  expect(await readFile(join(workspace, 'a.txt'), 'utf8')).toBe('two\n');
  expect(await made.forkAt(1)).not.toBe(made.sessionId);
});
