import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgentTask } from '../../src/scheduler/agent-runner.js';
import { llamaCppProps } from '../support/probe-fixtures.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

let server: ScriptedServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  server = undefined;
  dir = undefined;
});

describe('scheduled runs and the server they use', () => {
  it('asks a server an earlier run probed one question, not every kind of server again', async () => {
    server = await startScriptedServer({
      extraRoutes: { 'GET /props': () => ({ json: llamaCppProps }) },
      turns: [reply().text('one'), reply().text('two')],
    });
    dir = await realpath(await mkdtemp(join(tmpdir(), 'hearth-sched-probe-')));
    const workspace = join(dir, 'work');
    await mkdir(workspace);
    const env = { HOME: dir, HEARTH_BASE_URL: server.baseUrl, HEARTH_MODEL: 'scripted-model' };
    const options = { dbPath: join(dir, 'sched.db'), env, userDir: join(dir, '.hearth') };
    const run = async () => {
      const mark = server!.allRequests.length;
      const outcome = await runAgentTask(
        options,
        { workspace, prompt: 'hi', label: 'test' },
        new AbortController().signal,
      );
      expect(outcome.status, outcome.reason).toBe('ok');
      const mine = server!.allRequests.slice(mark);
      const chat = mine.findIndex((q) => q.path.endsWith('/chat/completions'));
      return mine.slice(0, chat).map((q) => `${q.method} ${q.path}`);
    };
    // The scripted server names no kind in its model list: the first run asks every kind at once.
    expect(await run()).toContain('POST /api/show');
    expect(await run()).toEqual(['GET /props']);
  });
});
