/**
 * A subsystem's tools close over ports src/setup/ binds to each session (issue 36): one runtime
 * serving many sessions, as the gateway's does, gives each session's tools that session's port,
 * never the first one's. Real SQLite, the scripted model server, the runtime as every surface
 * assembles it.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Runtime } from '../../src/agent/runtime.js';
import { openSession } from '../../src/agent/session-setup.js';
import { configSchema } from '../../src/config/schema.js';
import { resolveConnection } from '../../src/llm/connection.js';
import { assembleRuntime } from '../../src/setup/runtime.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { collectEvents } from '../support/session-deps.js';

let dir: string;
let server: ScriptedServer | undefined;
let runtime: Runtime | undefined;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'hearth-session-ports-')));
});
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

it('gives each session of one runtime its own wake-ups: a call lands on the session that made it', async () => {
  const wake = (message: string) => reply().tool('schedule_wakeup', { at: 'in 1h', message });
  server = await startScriptedServer({
    turns: [wake('first'), reply().text('set'), wake('second'), reply().text('set')],
  });
  const config = configSchema.parse({
    base_url: server.baseUrl,
    model: 'scripted-model',
    max_retries: 0,
    sandbox: 'none',
    permissions: { mode: 'auto' },
    db_path: join(dir, '.hearth', 'hearth.db'),
    tools: { enabled: ['default', 'wakeup'] },
  });
  runtime = await assembleRuntime({ config }, dir, { home: join(dir, '.hearth'), skills: false });
  const connection = await resolveConnection(config);
  const setup = { runtime, connection, approve: undefined, deepWork: false };
  const [a, b] = [await openSession(setup), await openSession(setup)];
  const ran = [await collectEvents(a.run('wake me: first')), await collectEvents(b.run('wake me: second'))];
  for (const events of ran) expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'completed' });

  const wakeups = (await runtime.sessions()).wakeups()!;
  const messages = async (sessionId: string) => (await wakeups.list({ sessionId })).map((w) => w.message);
  expect(await messages(a.id)).toEqual(['first']);
  expect(await messages(b.id)).toEqual(['second']);
  await a.close();
  await b.close();
});
